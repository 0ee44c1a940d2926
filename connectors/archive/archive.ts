/**
 * One Slack export, whether a ZIP or the folder it unpacks to: the same read-only view of its
 * files by their path inside the export (`users.json`, `general/2024-01-02.json`). Opening it
 * reads the file listing only (a ZIP's central directory); file contents are streamed on demand,
 * each checked against the caps as it is inflated (guard.ts). Entries that are never read (bad
 * names, duplicates, symbolic links) are listed in `refused` (entries.ts). The view and its caps
 * are declared in types.ts, which the two kinds (zip.ts, folder.ts) implement.
 */
import { statSync } from 'node:fs'

import { ChatferryError } from '../../src/errors.ts'
import { openFolderArchive } from './folder.ts'
import type { ArchiveLimits, ExportArchive } from './types.ts'
import { openZipArchive } from './zip.ts'

export type { RefusedEntry } from './entries.ts'
export { EntryUnreadable } from './guard.ts'
export type { ArchiveLimits, ExportArchive } from './types.ts'

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
