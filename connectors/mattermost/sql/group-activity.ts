/**
 * Mattermost's group activity: per channel, the earliest join in its membership history and its
 * earliest post (two grouped queries), for a channel whose `createat` is 0. Both are lower bounds
 * of what is imported.
 */
import type { GroupActivity } from '../../../src/model/connector.ts'
import { FieldProblem } from '../../sql/decode.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import { mmTime } from '../entities/decode-helpers.ts'
import { groupActivityQueries } from './queries.ts'

export async function mattermostGroupActivity(
  conn: SnapshotConnection,
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReadonlyMap<string, GroupActivity>> {
  const found = new Map<string, { firstJoinedAt?: number; firstSentAt?: number }>()
  const q = groupActivityQueries(conn.dialect)
  for (const [sql, field] of [
    [q.joins, 'firstJoinedAt'],
    [q.posts, 'firstSentAt'],
  ] as const) {
    options.signal?.throwIfAborted()
    const r = await conn.query(sql, [], `finding the earliest ${field === 'firstJoinedAt' ? 'join' : 'post'} of each channel`)
    for (const row of r.rows) {
      let t: number | undefined
      try {
        t = mmTime(field, row.t)
      } catch (err) {
        if (!(err instanceof FieldProblem)) {
          throw err
        }
      }
      if (t !== undefined && row.gid !== null && row.gid !== undefined) {
        const e = found.get(String(row.gid)) ?? {}
        e[field] = t
        found.set(String(row.gid), e)
      }
    }
  }
  return found
}
