/** The users entity: `users.json` (or `org_users.json`) element by element. Position: `{i}`. */
import type { Cursor } from '../../src/model/connector.ts'
import type { LegacyUser } from '../../src/model/records.ts'
import type { ExportArchive } from '../archive/archive.ts'
import { at, type PositionedRow } from '../rows/pages.ts'
import { decodeRow, problem } from '../rows/problems.ts'
import { isObject, str } from './entities/fields.ts'
import { decodeUser } from './entities/users.ts'
import { metadataElements } from './layout.ts'

export interface UsersRead {
  readonly archive: ExportArchive
  readonly file: string | undefined
  readonly exportTime: number
  readonly after?: Cursor
  readonly since?: number
}

export async function* userRows(o: UsersRead): AsyncGenerator<PositionedRow<LegacyUser>> {
  if (o.file === undefined) {
    return
  }
  const after = at(o.after, 'i')
  const first = new Map<string, number>()
  for await (const item of metadataElements(o.archive, o.file)) {
    const where = `${o.file}#${item.index}`
    const id = 'value' in item && isObject(item.value) ? str(item.value.id) : undefined
    const earlier = id === undefined ? undefined : first.get(id)
    if (id !== undefined && earlier === undefined) {
      first.set(id, item.index)
    }
    if (item.index <= after) {
      continue
    }
    const pos = { i: item.index }
    if (!('value' in item)) {
      yield { pos, row: problem(where, o.file, `${where}: ${item.error}`) }
      continue
    }
    if (id !== undefined && earlier !== undefined) {
      yield { pos, row: problem(id, 'id', `user ${id} appears again at ${where} (first at ${o.file}#${earlier}): the first is read`, where) }
      continue
    }
    const row = decodeRow(id ?? where, () => decodeUser(item.value, o.exportTime))
    const changedAt = row.ok ? row.record.updatedAt : undefined
    if (o.since !== undefined && row.ok && changedAt !== undefined && changedAt < o.since) {
      continue
    }
    yield { pos, row, ...(changedAt !== undefined ? { changedAt } : {}) }
  }
}

/** Slack handle (`name`) by user id, for mentions: streamed from the users file. */
export async function handlesById(archive: ExportArchive, file: string | undefined): Promise<Map<string, string>> {
  const handles = new Map<string, string>()
  if (file === undefined) {
    return handles
  }
  for await (const item of metadataElements(archive, file)) {
    if ('value' in item && isObject(item.value)) {
      const id = str(item.value.id)
      const name = str(item.value.name)
      if (id !== undefined && name !== undefined && !handles.has(id)) {
        handles.set(id, name)
      }
    }
  }
  return handles
}
