/**
 * The groups and members entities: `channels.json`, `groups.json`, `mpims.json` in that order,
 * element by element. Positions: groups `{f, i}` (file, element), members `{f, i, m}` (… member).
 * A conversation id listed twice (in one file or two) is read from its first entry; later entries
 * are problems, and their members are not read. Neither has a change time in an export: a delta
 * reads them all (planning finds the unchanged ones unchanged).
 */
import type { Cursor } from '../../src/model/connector.ts'
import type { LegacyGroup, LegacyMember } from '../../src/model/records.ts'
import type { ExportArchive } from '../archive/archive.ts'
import { type ParsedItem } from '../archive/array-file.ts'
import { at, type PositionedRow } from '../rows/pages.ts'
import { decodeRow, problem } from '../rows/problems.ts'
import { isObject, str } from './entities/fields.ts'
import { decodeGroup, GROUP_FILES, type GroupFile, groupRefusal, membersOf } from './entities/groups.ts'
import { metadataElements } from './layout.ts'

export interface GroupsRead {
  readonly archive: ExportArchive
  readonly after?: Cursor
  /** When an archived conversation was archived (its folder's archive message, else the export's time). */
  archivedAt(folder: string): Promise<number>
}

interface Entry {
  readonly f: number
  readonly file: GroupFile
  readonly item: ParsedItem
  /** The conversation's id when readable. */
  readonly id: string | undefined
  /** Where the first entry of this id is, when this one repeats it. */
  readonly firstAt: string | undefined
}

/** Every entry of the three files, with duplicate ids told apart; from the start, whatever `after`. */
async function* entries(archive: ExportArchive): AsyncGenerator<Entry> {
  const first = new Map<string, string>()
  for (const [f, file] of GROUP_FILES.entries()) {
    for await (const item of metadataElements(archive, file)) {
      const id = 'value' in item && isObject(item.value) ? str(item.value.id) : undefined
      const firstAt = id === undefined ? undefined : first.get(id)
      if (id !== undefined && firstAt === undefined) {
        first.set(id, `${file}#${item.index}`)
      }
      yield { f, file, item, id, firstAt }
    }
  }
}

const before = (e: Entry, after: Cursor | undefined) => e.f < at(after, 'f') || (e.f === at(after, 'f') && e.item.index < at(after, 'i'))

export async function* groupRows(o: GroupsRead): AsyncGenerator<PositionedRow<LegacyGroup>> {
  for await (const e of entries(o.archive)) {
    if (before(e, o.after) || (e.f === at(o.after, 'f') && e.item.index === at(o.after, 'i'))) {
      continue
    }
    const where = `${e.file}#${e.item.index}`
    const pos = { f: e.f, i: e.item.index }
    if (!('value' in e.item)) {
      yield { pos, row: problem(where, e.file, `${where}: ${e.item.error}`) }
    } else if (e.id !== undefined && e.firstAt !== undefined) {
      yield { pos, row: problem(e.id, 'id', `conversation ${e.id} appears again at ${where} (first at ${e.firstAt}): the first is read`, where) }
    } else {
      const value = e.item.value
      const archived = isObject(value) && value.is_archived === true
      const archivedAt = archived ? await o.archivedAt(str(value.name) ?? '') : 0
      yield { pos, row: decodeRow(e.id ?? where, () => decodeGroup(value, e.file, archivedAt)) }
    }
  }
}

export async function* memberRows(archive: ExportArchive, after?: Cursor): AsyncGenerator<PositionedRow<LegacyMember>> {
  for await (const e of entries(archive)) {
    if (before(e, after) || e.id === undefined || e.firstAt !== undefined || !('value' in e.item)) {
      continue
    }
    const skipTo = e.f === at(after, 'f') && e.item.index === at(after, 'i') ? at(after, 'm') : -1
    const seen = new Map<string, number>()
    const refusal = groupRefusal(e.item.value, e.file)
    for (const [m, userId] of membersOf(e.item.value).entries()) {
      const pos = { f: e.f, i: e.item.index, m }
      const valid = typeof userId === 'string' && userId !== ''
      const earlier = valid ? seen.get(userId) : undefined
      if (valid && earlier === undefined) {
        seen.set(userId, m)
      }
      if (m <= skipTo) {
        continue
      }
      const where = `${e.file}#${e.item.index} members[${m}]`
      if (refusal !== undefined) {
        const reason = `${where}: its conversation ${e.id} was not read (${e.file}#${e.item.index}: ${refusal})`
        yield { pos, row: problem(`${e.id}/${valid ? userId : '?'}`, 'groupId', reason, where) }
      } else if (!valid) {
        yield { pos, row: problem(`${e.id}/?`, 'members', `${where} is not a user id: ${JSON.stringify(userId)?.slice(0, 40)}`, where) }
      } else if (earlier !== undefined) {
        yield {
          pos,
          row: problem(`${e.id}/${userId}`, 'members', `${userId} is listed twice in ${e.id}'s members (first at members[${earlier}])`, where),
        }
      } else {
        yield { pos, row: { ok: true, record: { groupId: e.id, userId, scope: 'participant', banned: false } } }
      }
    }
  }
}
