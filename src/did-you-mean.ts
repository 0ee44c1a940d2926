/**
 * "did you mean …?" for a name the operator typed (a job id, a configuration key): the known
 * name closest by edit distance, when it is close enough to be a typo rather than another name.
 */

/** Levenshtein distance (insertions, deletions, substitutions; a swap of two neighbours counts one). */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)])
  for (let j = 1; j <= b.length; j++) {
    d[0]![j] = j
  }
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, d[i - 2]![j - 2]! + 1)
      }
      d[i]![j] = best
    }
  }
  return d[a.length]![b.length]!
}

/**
 * The known name closest to `typed`, when its distance is at most a third of the longer name
 * (at least 1): `alpah` → `alpha`, `messagse` → `messages`; `beta` is no typo of `alpha`.
 */
export function closestName(typed: string, known: readonly string[]): string | undefined {
  let best: { name: string; distance: number } | undefined
  for (const name of known) {
    const distance = editDistance(typed.toLowerCase(), name.toLowerCase())
    if (distance > 0 && distance <= Math.max(1, Math.floor(Math.max(typed.length, name.length) / 3)) && (!best || distance < best.distance)) {
      best = { name, distance }
    }
  }
  return best?.name
}
