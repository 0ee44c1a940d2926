/**
 * One Slack export, whether a ZIP or the folder it unpacks to: the same read-only view of its
 * files by their path inside the export (`users.json`, `general/2024-01-02.json`). Opening it
 * reads the file listing only (a ZIP's central directory); file contents are streamed on demand.
 */
import { statSync } from 'node:fs'
import type { Readable } from 'node:stream'

import { ChatferryError } from '../../../src/errors.ts'
import { openFolderArchive } from './folder.ts'
import { openZipArchive } from './zip.ts'

export interface ExportArchive {
  /** What to call the export in messages: its path. */
  readonly label: string
  /** The newest modification time of the export (the ZIP file, or the folder's top-level files), epoch ms. */
  readonly modifiedAt: number
  /** True when the export has this top-level file. */
  hasFile(name: string): boolean
  /** The top-level folders, sorted. */
  folders(): readonly string[]
  /** The files directly in a top-level folder, sorted. */
  filesIn(folder: string): readonly string[]
  /** The bytes of one file (`folder/name` or a top-level name), streamed: for files of any size. */
  open(path: string): Promise<Readable>
  /** The bytes of one file at once: for the day files, which are one day of one conversation. */
  read(path: string): Promise<Buffer>
  close(): Promise<void>
}

/** The listing both kinds share once read: top-level files and each folder's files. */
export interface Listing {
  readonly top: Set<string>
  readonly folders: Map<string, string[]>
}

/** Files that mark the root of a Slack export. */
const ROOT_MARKERS = ['channels.json', 'users.json', 'org_users.json']

/**
 * Adds a path (relative to the export, `/`-separated) to a listing. Only top-level files and the
 * files one folder deep are kept: that is all a Slack export has that chatferry reads.
 */
export function addToListing(listing: Listing, path: string): void {
  const parts = path.split('/').filter((p) => p !== '')
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

/**
 * Some tools zip the export inside one top-level folder (`Acme Slack export Jan 1 2024/users.json`).
 * Returns that folder's name when the root has no marker file and exactly one folder does.
 */
export function nestedRoot(paths: Iterable<string>): string | undefined {
  const rootMarkers = new Set<string>()
  const nested = new Set<string>()
  for (const p of paths) {
    const parts = p.split('/').filter((x) => x !== '')
    if (parts.length === 1 && ROOT_MARKERS.includes(parts[0] as string)) {
      rootMarkers.add(p)
    } else if (parts.length === 2 && ROOT_MARKERS.includes(parts[1] as string)) {
      nested.add(parts[0] as string)
    }
  }
  return rootMarkers.size === 0 && nested.size === 1 ? [...nested][0] : undefined
}

export function sortListing(listing: Listing): void {
  for (const list of listing.folders.values()) {
    list.sort(byCodeUnits)
  }
}

/** Every chunk of a stream, concatenated. */
export async function bytesOf(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    parts.push(chunk)
  }
  return parts.length === 1 ? (parts[0] as Buffer) : Buffer.concat(parts)
}

export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/**
 * Opens the export at `path` (a ZIP file or a folder). Fails with SOURCE_UNAVAILABLE when it cannot
 * be read, SOURCE_INVALID when it is not a Slack export (no `channels.json` / `users.json`).
 */
export async function openArchive(path: string): Promise<ExportArchive> {
  let isDir: boolean
  try {
    isDir = statSync(path).isDirectory()
  } catch (err) {
    throw new ChatferryError('SOURCE_UNAVAILABLE', `cannot read the Slack export ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      cause: err,
    })
  }
  const archive = isDir ? openFolderArchive(path) : await openZipArchive(path)
  if (!archive.hasFile('channels.json') && !archive.hasFile('users.json') && !archive.hasFile('org_users.json')) {
    await archive.close()
    throw new ChatferryError(
      'SOURCE_INVALID',
      `${path} is not a Slack export: it has no channels.json, users.json or org_users.json at its root (set source.path to the export's ZIP or the folder it unpacks to)`,
    )
  }
  return archive
}
