/**
 * The listing of an export, built the same way for a ZIP and a folder from its raw entries: which
 * files the connector may read, by their path inside the export, and which entries it refuses and
 * why — an absolute name, a name that climbs out with `..`, a second entry of the same name (the
 * first is read), a symbolic link (never followed). Refused entries are never read; the read of
 * the entity they would feed reports each as a problem naming the entry.
 */

/** One entry as the archive lists it: a path inside the export, `/`-separated. */
export interface RawEntry<T> {
  readonly name: string
  readonly kind: 'file' | 'dir' | 'symlink'
  /** Inflated size: the ZIP's declared size, or the file's size on disk. */
  readonly size: number
  readonly ref: T
}

/** An entry the connector will not read, and why. */
export interface RefusedEntry {
  readonly name: string
  readonly reason: string
}

/** The listing both kinds share once read: top-level files and each folder's files. */
export interface Listing<T> {
  readonly top: Set<string>
  readonly folders: Map<string, string[]>
  /** Each readable file by its path inside the export (the nesting folder removed). */
  readonly byPath: Map<string, { readonly size: number; readonly ref: T }>
  readonly refused: RefusedEntry[]
  /** The inflated bytes of every readable file together. */
  readonly totalBytes: number
}

/** Files that mark the root of a Slack export. */
export const ROOT_MARKERS = ['channels.json', 'users.json', 'org_users.json']

export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

const partsOf = (p: string) => p.split('/').filter((x) => x !== '')

/** Why an entry name cannot be read safely; undefined when it can. */
export function badName(name: string): string | undefined {
  if (name.startsWith('/') || name.startsWith('\\')) {
    return 'an absolute name (leading /): not read, it could name a file outside the export'
  }
  if (/^[A-Za-z]:[/\\]/.test(name)) {
    return 'an absolute Windows name (drive letter): not read'
  }
  if (name.split(/[/\\]/).includes('..')) {
    return 'a name that climbs out of the export (..): not read'
  }
  return undefined
}

/**
 * Some tools zip the export inside one top-level folder (`Acme Slack export Jan 1 2024/users.json`).
 * Returns that folder's name when the root has no marker file and exactly one folder does.
 */
export function nestedRoot(paths: Iterable<string>): string | undefined {
  let rootMarkers = 0
  const nested = new Set<string>()
  for (const p of paths) {
    const parts = partsOf(p)
    if (parts.length === 1 && ROOT_MARKERS.includes(parts[0] as string)) {
      rootMarkers++
    } else if (parts.length === 2 && ROOT_MARKERS.includes(parts[1] as string)) {
      nested.add(parts[0] as string)
    }
  }
  return rootMarkers === 0 && nested.size === 1 ? [...nested][0] : undefined
}

/** Builds the listing of `entries` (in the archive's order: the first of two same names is read). */
export function buildListing<T>(entries: readonly RawEntry<T>[]): Listing<T> {
  const refused: RefusedEntry[] = []
  const safe: { e: RawEntry<T>; at: number }[] = []
  for (const [at, e] of entries.entries()) {
    const bad = badName(e.name)
    if (bad !== undefined) {
      refused.push({ name: e.name, reason: bad })
    } else if (e.kind === 'symlink') {
      refused.push({ name: e.name, reason: 'a symbolic link: never followed (copy the file itself into the export)' })
    } else if (e.kind === 'file') {
      safe.push({ e, at })
    }
  }
  const prefix = nestedRoot(safe.map((s) => s.e.name))
  const listing: Listing<T> = { top: new Set(), folders: new Map(), byPath: new Map(), refused, totalBytes: 0 }
  const firstAt = new Map<string, number>()
  let total = 0
  for (const { e, at } of safe) {
    const parts = partsOf(e.name)
    if (prefix !== undefined && parts[0] !== prefix) {
      continue
    }
    const inner = (prefix === undefined ? parts : parts.slice(1)).join('/')
    const first = firstAt.get(inner)
    if (first !== undefined) {
      refused.push({ name: e.name, reason: `a second entry with the same name (the first, entry #${first + 1} of the archive's directory, is read)` })
      continue
    }
    firstAt.set(inner, at)
    listing.byPath.set(inner, { size: e.size, ref: e.ref })
    total += e.size
    addToListing(listing, inner)
  }
  for (const list of listing.folders.values()) {
    list.sort(byCodeUnits)
  }
  return { ...listing, totalBytes: total }
}

/** Adds a path to a listing: only top-level files and files one folder deep are all a Slack export has that is read. */
function addToListing(listing: Listing<unknown>, inner: string): void {
  const parts = inner.split('/')
  if (parts.length === 1) {
    listing.top.add(parts[0] as string)
  } else if (parts.length === 2) {
    const [folder, name] = parts as [string, string]
    const list = listing.folders.get(folder)
    if (list === undefined) {
      listing.folders.set(folder, [name])
    } else {
      list.push(name)
    }
  }
}
