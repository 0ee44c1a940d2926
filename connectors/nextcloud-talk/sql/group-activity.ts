/** Nextcloud Talk's group activity: per group room, its earliest chat comment (Talk rooms carry no creation time). */
import type { GroupActivity } from '../../../src/model/connector.ts'
import { FieldProblem } from '../../sql/decode.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'
import type { NextcloudTalkConfig } from '../config.ts'
import { ncTime } from '../entities/decode-helpers.ts'
import { firstMessageQuery, roomTypes } from './queries.ts'
import type { NcSchema } from './tables.ts'

export async function nextcloudGroupActivity(
  conn: SnapshotConnection,
  schema: NcSchema,
  rooms: NextcloudTalkConfig['rooms'],
  options: { readonly signal?: AbortSignal } = {},
): Promise<ReadonlyMap<string, GroupActivity>> {
  options.signal?.throwIfAborted()
  const sql = firstMessageQuery(schema, roomTypes(rooms).groups)
  const r = await conn.query(sql, [], 'finding the first message of each conversation')
  const found = new Map<string, GroupActivity>()
  for (const row of r.rows) {
    try {
      const t = ncTime('creation_timestamp', row.t)
      if (t !== undefined && row.gid !== null && row.gid !== undefined) {
        found.set(String(row.gid), { firstSentAt: t })
      }
    } catch (err) {
      if (!(err instanceof FieldProblem)) {
        throw err
      }
    }
  }
  return found
}
