/**
 * One Slack export, whether a ZIP or the folder it unpacks to: the same read-only view of its
 * files by their path inside the export (`users.json`, `general/2024-01-02.json`). Opening it
 * reads the file listing only (a ZIP's central directory); file contents are streamed on demand,
 * each checked against the caps as it is inflated (guard.ts). Entries that are never read (bad
 * names, duplicates, symbolic links) are listed in `refused` (entries.ts).
 */
import { statSync } from 'node:fs'

import { ChatferryError } from '../../src/errors.ts'
import type { RefusedEntry } from './entries.ts'
import { openFolderArchive } from './folder.ts'
import { openZipArchive } from './zip.ts'

export type { RefusedEntry } from './entries.ts'
export { EntryUnreadable } from './guard.ts'

export interface ExportArchive {
  /** What to call the export in messages: its path. */
  readonly label: string
  /** The newest modification time of the export (the ZIP file, or the folder's top-level files), epoch ms. */
  readonly modifiedAt: number
  /** The caps it is read with. */
  readonly limits: ArchiveLimits
  /** Entries that are never read, with the reason: each is a problem of a read. */
  readonly refused: readonly RefusedEntry[]
  /** True when the export has this top-level file. */
  hasFile(name: string): boolean
  /** The top-level files, sorted (the Sendbird connector reads every data file it finds). */
  topFiles(): readonly string[]
  /**
   * True when the export holds a readable file at this path, at any depth (`__uploads/F1/a.png`,
   * `general/attachments/F1-a.png`: the files some export tools put beside the day files). A name
   * that climbs out, is absolute, or passes through a symbolic link is never one.
   */
  hasEntry(path: string): boolean
  /** Why the export's entry at `path` is never read (a symbolic link, …), or undefined when it is readable or absent. */
  entryProblem(path: string): string | undefined
  /** The top-level folders, sorted. */
  folders(): readonly string[]
  /** The files directly in a top-level folder, sorted. */
  filesIn(folder: string): readonly string[]
  /** A file's inflated size as listed (declared by the ZIP; checked again while reading). */
  sizeOf(path: string): number
  /**
   * The bytes of one file (`folder/name` or a top-level name), streamed, from byte `offset` (a
   * ZIP entry is still inflated and checked from its start; the bytes before `offset` are
   * dropped). A file that cannot be read for good (over a cap, corrupt) fails the iteration with
   * an EntryUnreadable.
   */
  open(path: string, offset?: number): Promise<AsyncIterable<Buffer>>
  /** The bytes of one file at once (small files only: the caller checks {@link sizeOf}). */
  read(path: string): Promise<Buffer>
  close(): Promise<void>
}

export interface ArchiveLimits {
  /** Most inflated bytes of one file. */
  readonly maxEntryBytes: number
  /** Most inflated bytes of all files together. */
  readonly maxArchiveBytes: number
  /** Most bytes of one element of a JSON array file (the readers' cap; memory is bounded by it). */
  readonly maxElementBytes: number
}

/**
 * Opens the export at `path` (a ZIP file or a folder). Fails with SOURCE_UNAVAILABLE when it cannot
 * be read, SOURCE_INVALID when it is not a Slack export (no `channels.json`, no users file), or
 * declares more bytes than `maxArchiveBytes` in all.
 */
export async function openArchive(path: string, limits: ArchiveLimits): Promise<ExportArchive> {
  let isDir: boolean
  try {
    isDir = statSync(path).isDirectory()
  } catch (err) {
    throw new ChatferryError('SOURCE_UNAVAILABLE', `cannot read the Slack export ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`, {
      cause: err,
    })
  }
  const { archive, totalBytes } = isDir ? openFolderArchive(path, limits) : await openZipArchive(path, limits)
  const missing = [
    archive.hasFile('channels.json') ? undefined : 'channels.json',
    archive.hasFile('users.json') || archive.hasFile('org_users.json') ? undefined : 'users.json (org_users.json on Enterprise Grid)',
  ].filter((m) => m !== undefined)
  const problem =
    missing.length > 0
      ? `${path} is not a complete Slack export: it has no ${missing.join(' and no ')} at its root` +
        (archive.refused.length > 0 ? ` (entries not read: ${archive.refused.map((r) => `${r.name}: ${r.reason}`).join('; ')})` : '') +
        ` (set source.path to the export's ZIP or the folder it unpacks to)`
      : totalBytes > limits.maxArchiveBytes
        ? `the Slack export ${path} inflates to ${totalBytes} bytes in all, over source.maxArchiveBytes (${limits.maxArchiveBytes}): raise it if the export is genuine`
        : undefined
  if (problem !== undefined) {
    await archive.close()
    throw new ChatferryError('SOURCE_INVALID', problem)
  }
  return archive
}
