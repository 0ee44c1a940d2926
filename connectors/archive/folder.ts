/**
 * A Slack export unpacked into a folder: its top-level files and the files of its top-level
 * folders. Symbolic links (to files or folders) are listed as refused, never followed: an export
 * is read from its own files only.
 */
import { createReadStream, type Dirent, lstatSync, readdirSync, readFileSync, statSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'

import { ChatferryError } from '../../src/errors.ts'
import { badName, buildListing, byCodeUnits, nestedRoot, type RawEntry } from './entries.ts'
import { EntryUnreadable, guarded } from './guard.ts'
import type { ArchiveLimits, ExportArchive } from './types.ts'

/** Files up to this size are read synchronously (see `read`). */
const SYNC_READ_BYTES = 1024 * 1024

const kindOf = (d: Dirent): RawEntry<string>['kind'] | undefined =>
  d.isSymbolicLink() ? 'symlink' : d.isFile() ? 'file' : d.isDirectory() ? 'dir' : undefined

/** The entries of `root` two levels deep (top-level files and folders, the folders' files). */
function walk(root: string): RawEntry<string>[] {
  const entries: RawEntry<string>[] = []
  const add = (d: Dirent, name: string) => {
    const kind = kindOf(d)
    const full = join(root, ...name.split('/'))
    if (kind !== undefined) {
      entries.push({ name, kind, size: kind === 'file' ? statSync(full).size : 0, ref: full })
    }
    return kind
  }
  for (const d of readdirSync(root, { withFileTypes: true }).sort((a, b) => byCodeUnits(a.name, b.name))) {
    if (add(d, d.name) === 'dir') {
      for (const f of readdirSync(join(root, d.name), { withFileTypes: true }).sort((a, b) => byCodeUnits(a.name, b.name))) {
        add(f, `${d.name}/${f.name}`)
      }
    }
  }
  return entries
}

/**
 * A file deeper than the listing (`__uploads/F1/a.png`, `general/attachments/F1-a.png`): found by
 * walking its path one component at a time without following a symbolic link anywhere, so it is
 * always inside the export. Undefined when there is none (or the name is unsafe).
 */
export function deepFile(root: string, p: string): { size: number; ref: string } | undefined {
  const found = walkTo(root, p)
  return found !== undefined && 'ref' in found ? found : undefined
}

/** Why the path is never read: a symbolic link on the way, an unsafe name; undefined otherwise. */
export function deepProblem(root: string, p: string): string | undefined {
  const found = walkTo(root, p)
  return found !== undefined && 'problem' in found ? found.problem : undefined
}

function walkTo(root: string, p: string): { size: number; ref: string } | { problem: string } | undefined {
  const bad = badName(p) ?? (p.includes('\0') ? 'a name with a NUL byte: not read' : undefined)
  if (bad !== undefined) {
    return { problem: bad }
  }
  const parts = p.split('/').filter((x) => x !== '' && x !== '.')
  let at = root
  for (const [i, part] of parts.entries()) {
    at = join(at, part)
    let st
    try {
      st = lstatSync(at)
    } catch {
      return undefined
    }
    const last = i === parts.length - 1
    if (st.isSymbolicLink()) {
      return { problem: 'a symbolic link: never followed (copy the file itself into the export)' }
    }
    if (last ? !st.isFile() : !st.isDirectory()) {
      return undefined
    }
    if (last) {
      return { size: st.size, ref: at }
    }
  }
  return undefined
}

/**
 * {@link deepFile} for the export at `root` whose walk (two levels deep) gave `raw`: a path whose
 * first folder, or first two, the walk saw as no real folder (absent, a file, a symbolic link) is
 * no file without a look at the disk. The Slack locator asks for two or three such paths for every
 * file a message shares (`__uploads/…`, `<folder>/attachments/…`, usually absent): one `lstat` per
 * component each, which was a tenth of a Slack export's read.
 */
function deepLookup(root: string, raw: readonly RawEntry<string>[]): (p: string) => { size: number; ref: string } | undefined {
  const dirs = new Set(raw.filter((e) => e.kind === 'dir').map((e) => e.name))
  return (p) => {
    const parts = p.split('/').filter((x) => x !== '' && x !== '.')
    if (parts.length >= 2 && !dirs.has(parts[0] as string)) {
      return undefined
    }
    if (parts.length >= 3 && !dirs.has(`${parts[0]}/${parts[1]}`)) {
      return undefined
    }
    return deepFile(root, p)
  }
}

export function openFolderArchive(path: string, limits: ArchiveLimits): { archive: ExportArchive; totalBytes: number } {
  let raw: RawEntry<string>[]
  let root = path
  try {
    raw = walk(path)
    const nested = nestedRoot(raw.filter((e) => e.kind === 'file').map((e) => e.name))
    if (nested !== undefined) {
      root = join(path, nested)
      raw = walk(root)
    }
  } catch (err) {
    throw new ChatferryError(
      'SOURCE_UNAVAILABLE',
      `cannot list the Slack export folder ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      {
        cause: err,
      },
    )
  }
  const listing = buildListing(raw)
  const deep = deepLookup(root, raw)
  let modifiedAt = 0
  for (const name of listing.top) {
    modifiedAt = Math.max(modifiedAt, statSync(listing.byPath.get(name)?.ref as string).mtimeMs)
  }
  const folders = [...listing.folders.keys()].sort(byCodeUnits)
  const fileOf = (p: string) => {
    const found = listing.byPath.get(p) ?? deep(p)
    if (found === undefined) {
      throw new ChatferryError('SOURCE_INVALID', `the Slack export ${path} has no file ${p}`)
    }
    if (found.size > limits.maxEntryBytes) {
      throw new EntryUnreadable(`entry ${p} of ${path}`, `is ${found.size} bytes, over source.maxEntryBytes (${limits.maxEntryBytes}): not read`)
    }
    return found.ref
  }
  const cap = { maxBytes: limits.maxEntryBytes, capName: 'source.maxEntryBytes' }
  const sizeOf = (p: string) => (listing.byPath.get(p) ?? deep(p))?.size ?? 0
  const archive: ExportArchive = {
    label: path,
    modifiedAt: Math.floor(modifiedAt),
    limits,
    refused: listing.refused,
    hasFile: (name) => listing.top.has(name),
    topFiles: () => [...listing.top].sort(byCodeUnits),
    hasEntry: (p) => listing.byPath.has(p) || deep(p) !== undefined,
    entryProblem: (p) => listing.refused.find((r) => r.name === p)?.reason ?? deepProblem(root, p),
    folders: () => folders,
    filesIn: (folder) => listing.folders.get(folder) ?? [],
    sizeOf,
    open: (p, offset = 0) =>
      new Promise((resolve, reject) => {
        const s = createReadStream(fileOf(p), { start: offset })
        s.once('open', () => resolve(guarded(s, { entry: `entry ${p} of ${path}`, ...cap })))
        s.once('error', reject)
      }),
    // One read of the whole file: a stream would read a day file in 64 KiB chunks, one round trip each.
    // A small file is read synchronously: `readFile` costs four thread-pool round trips (open, stat,
    // read, close), 4-5× the CPU of the read itself for a 56 KiB Slack day file; it blocks the
    // event loop no longer than parsing the same bytes does.
    read: async (p) => {
      const file = fileOf(p)
      const bytes = sizeOf(p) <= SYNC_READ_BYTES ? readFileSync(file) : await readFile(file)
      if (bytes.length > limits.maxEntryBytes) {
        throw new EntryUnreadable(`entry ${p} of ${path}`, `grew to ${bytes.length} bytes, over source.maxEntryBytes (${limits.maxEntryBytes})`)
      }
      return bytes
    },
    close: async () => {},
  }
  return { archive, totalBytes: listing.totalBytes }
}
