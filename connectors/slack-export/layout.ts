/**
 * Which conversation each folder of the export holds, read once per session from the metadata
 * files: `channels.json` and `groups.json` (folder = the channel's name), `mpims.json` (folder =
 * the group DM's name) and `dms.json` (folder = the DM's id, members = its two users). Entries that
 * cannot be read are left out here (the groups read reports them); an entry that is read but cannot
 * become a group keeps the reason, which its messages' problems name; a folder no entry names holds
 * messages of an unknown conversation.
 */
import type { ExportArchive } from '../archive/archive.ts'
import { streamItems } from '../archive/array-file.ts'
import { isObject, str } from './entities/fields.ts'
import { GROUP_FILES, groupRefusal, KIND_OF_FILE } from './entities/groups.ts'
import type { Conversation } from './entities/messages.ts'

/** A day file's name: `YYYY-MM-DD.json`. Other files in a folder (canvases, attachments) are not messages. */
export const DAY_FILE = /^\d{4}-\d{2}-\d{2}\.json$/

export interface Layout {
  /** The conversation a folder holds. */
  readonly byFolder: ReadonlyMap<string, Conversation>
  /** A conversation's name by id (channels and group DMs), for `<#C…>` references. */
  readonly nameById: ReadonlyMap<string, string>
  /** The users file: `users.json`, or `org_users.json` in an Enterprise Grid export. */
  readonly usersFile: string | undefined
}

/** Parsed elements of a top-level JSON array file, streamed; nothing when the file is absent. */
export async function* metadataElements(archive: ExportArchive, file: string) {
  if (archive.hasFile(file)) {
    yield* streamItems(archive, file, archive.limits.maxElementBytes)
  }
}

export async function readLayout(archive: ExportArchive): Promise<Layout> {
  const byFolder = new Map<string, Conversation>()
  const nameById = new Map<string, string>()
  const ids = new Set<string>()
  for (const file of [...GROUP_FILES, 'dms.json'] as const) {
    for await (const item of metadataElements(archive, file)) {
      if (!('value' in item) || !isObject(item.value)) {
        continue
      }
      const id = str(item.value.id)
      if (id === undefined || ids.has(id)) {
        continue
      }
      ids.add(id)
      if (file === 'dms.json') {
        const members = Array.isArray(item.value.members) ? item.value.members.filter((m): m is string => typeof m === 'string') : []
        if (!byFolder.has(id)) {
          byFolder.set(id, { id, kind: 'dm', folder: id, members })
        }
        continue
      }
      const name = str(item.value.name)
      if (name !== undefined) {
        nameById.set(id, name)
        if (!byFolder.has(name)) {
          const refusal = groupRefusal(item.value, file)
          const refused = refusal === undefined ? undefined : `${file}#${item.index}: ${refusal}`
          byFolder.set(name, { id, kind: KIND_OF_FILE[file], folder: name, ...(refused !== undefined ? { refused } : {}) })
        }
      }
    }
  }
  const usersFile = archive.hasFile('users.json') ? 'users.json' : archive.hasFile('org_users.json') ? 'org_users.json' : undefined
  return { byFolder, nameById, usersFile }
}
