import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

export interface AcceptedRejectRow {
  entity: Entity
  legacy_id: string
  target_key: string
  code: string | null
  message: string | null
  reason: string
  accepted_by: string
  accepted_at: Date
}

/**
 * The acceptances in force of a job: those whose item is still rejected with the code it had when
 * accepted (a lapsed one, or one whose item was loaded since, is not listed), oldest first.
 */
export async function selectAcceptedRejects(
  db: Kysely<StateDatabase>,
  jobId: string,
  filter: { code?: string; entity?: Entity; limit?: number } = {},
): Promise<AcceptedRejectRow[]> {
  const r = await sql<AcceptedRejectRow>`
    select a.entity, a.legacy_id, a.target_key, a.code, a.message, a.reason, a.accepted_by, a.accepted_at
    from chatferry.accepted_rejects a
    join chatferry.items i on i.job_id = a.job_id and i.entity = a.entity and i.target_key = a.target_key
    where a.job_id = ${jobId} and i.status = 'rejected' and i.last_error_code is not distinct from a.code
      ${filter.entity === undefined ? sql`` : sql`and a.entity = ${filter.entity}`}
      ${filter.code === undefined ? sql`` : sql`and a.code = ${filter.code}`}
    order by a.accepted_at, i.id
    limit ${filter.limit ?? 1_000_000}`.execute(db)
  return r.rows.map((row) => ({ ...row, accepted_at: new Date(row.accepted_at) }))
}
