/**
 * The entries of the export that are never read (refused by the listing: a bad name, a second
 * entry of the same name, a symbolic link) as problems, each reported by the read of the entity
 * it would have fed: the users file → users, the channel files → groups, anything else (day files,
 * `dms.json`, unknown files) → messages. They come first in the read, at positions `{p}`; a cursor
 * with any other key is past them.
 */
import type { Cursor } from '../../src/model/connector.ts'
import type { LegacyEntity } from '../../src/model/records.ts'
import type { ExportArchive } from '../archive/archive.ts'
import { at, type PositionedRow } from '../rows/pages.ts'
import { problem } from '../rows/problems.ts'

const ENTITY_OF_FILE: Readonly<Record<string, LegacyEntity>> = {
  'users.json': 'users',
  'org_users.json': 'users',
  'channels.json': 'groups',
  'groups.json': 'groups',
  'mpims.json': 'groups',
}

/** The entity whose read reports a refused entry (by its last name part). */
export function entityOfEntry(name: string): LegacyEntity {
  const base =
    name
      .split(/[/\\]/)
      .filter((p) => p !== '')
      .at(-1) ?? ''
  return ENTITY_OF_FILE[base] ?? 'messages'
}

/** Whether a cursor is still among the refused entries (or before them). */
export const inRefused = (after: Cursor | undefined) => after === undefined || Object.keys(after).every((k) => k === 'p')

export async function* refusedRows<T>(archive: ExportArchive, entity: LegacyEntity, after: Cursor | undefined): AsyncGenerator<PositionedRow<T>> {
  if (!inRefused(after)) {
    return
  }
  const skipTo = at(after, 'p')
  for (const [p, entry] of archive.refused.entries()) {
    if (p > skipTo && entityOfEntry(entry.name) === entity) {
      const reason = `entry ${entry.name} of the Slack export ${archive.label} is ${entry.reason}`
      yield { pos: { p }, row: problem(`entry:${entry.name}`, 'file', reason, `refused entry ${p + 1}`) }
    }
  }
}
