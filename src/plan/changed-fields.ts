/** Top-level and second-level field paths whose JSON differs between two payloads. */
export function changedFields(before: unknown, after: unknown): string[] {
  const out: string[] = []
  const a = (before ?? {}) as Record<string, unknown>
  const b = (after ?? {}) as Record<string, unknown>
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    const x = a[key]
    const y = b[key]
    if (JSON.stringify(x) === JSON.stringify(y)) {
      continue
    }
    const nested = (v: unknown) => v !== null && typeof v === 'object' && !Array.isArray(v)
    if (nested(x) && nested(y)) {
      const xo = x as Record<string, unknown>
      const yo = y as Record<string, unknown>
      for (const k of new Set([...Object.keys(xo), ...Object.keys(yo)])) {
        if (JSON.stringify(xo[k]) !== JSON.stringify(yo[k])) {
          out.push(`${key}.${k}`)
        }
      }
    } else {
      out.push(key)
    }
  }
  return out.sort()
}
