/**
 * The generic SQL connector's group activity: per group, `min(joined_at)` of the members query and
 * `min(sent_at)` of the messages query's group messages, one grouped query each over the whole
 * query, in the session's snapshot. The minimum is the engine's order of the column (right for
 * timestamp and epoch columns, and for text in one format and offset, as delta mode's
 * comparison); a minimum that does not decode is left out.
 */
import type { GroupActivity } from '../../src/model/connector.ts'
import type { LegacyEntity } from '../../src/model/records.ts'
import { decodeId, decodeTimestamp, FieldProblem } from '../sql/decode.ts'
import { Params } from '../sql/dialect.ts'
import type { SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { PreparedEntity } from './prepare.ts'

/** `SELECT <id>, min(<time>) … GROUP BY <id>`, decoded: group id → epoch ms. */
async function earliestPerGroup(
  conn: SnapshotConnection,
  p: PreparedEntity,
  idColumn: string,
  timeColumn: string,
  where: (params: Params) => string[],
): Promise<Map<string, number>> {
  const q = (name: string) => `src.${conn.dialect.quote(name)}`
  const params = new Params(conn.dialect)
  const conditions = [`${q(idColumn)} IS NOT NULL`, `${q(timeColumn)} IS NOT NULL`, ...where(params)]
  const sql = `SELECT ${q(idColumn)} AS gid, min(${q(timeColumn)}) AS t FROM ${p.from} WHERE ${conditions.join(' AND ')} GROUP BY ${q(idColumn)}`
  const r = await p.conn.query(sql, params.values, `finding the earliest ${timeColumn} of each group`)
  const earliest = new Map<string, number>()
  for (const row of r.rows) {
    try {
      const t = decodeTimestamp(timeColumn, row.t, p.query.timeFormat)
      if (t !== undefined) {
        earliest.set(decodeId(idColumn, row.gid, conn.lossyText), t)
      }
    } catch (err) {
      if (!(err instanceof FieldProblem)) {
        throw err
      }
    }
  }
  return earliest
}

export async function genericSqlGroupActivity(
  conn: SnapshotConnection,
  entities: ReadonlyMap<LegacyEntity, PreparedEntity>,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReadonlyMap<string, GroupActivity>> {
  const found = new Map<string, { firstJoinedAt?: number; firstSentAt?: number }>()
  const entry = (id: string): { firstJoinedAt?: number; firstSentAt?: number } => {
    const e = found.get(id) ?? {}
    found.set(id, e)
    return e
  }
  const members = entities.get('members')
  if (members?.columns.has('joined_at')) {
    for (const [id, t] of await earliestPerGroup(conn, members, 'group_id', 'joined_at', () => [])) {
      entry(id).firstJoinedAt = t
    }
  }
  options.signal?.throwIfAborted()
  const messages = entities.get('messages')
  if (messages) {
    const type = `src.${conn.dialect.quote('receiver_type')}`
    for (const [id, t] of await earliestPerGroup(conn, messages, 'receiver_id', 'sent_at', (params) => [`${type} = ${params.add('group')}`])) {
      entry(id).firstSentAt = t
    }
  }
  return found
}
