import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** An update the platform refused, as `chatferry rejects` lists it. */
export interface UpdateRejectRow {
  readonly entity: string
  readonly kind: string
  readonly legacyId: string
  readonly targetKey: string
  readonly code: string | null
  readonly message: string | null
  readonly httpStatus: number | null
  readonly attempts: number
  readonly settledAt: Date | null
}

/** The job's rejected updates, oldest first, optionally of one entity or error code. */
export async function selectUpdateRejects(
  db: Kysely<StateDatabase>,
  jobId: string,
  filter: { code?: string; entity?: string; limit?: number },
): Promise<UpdateRejectRow[]> {
  const r = await sql<{
    entity: string
    kind: string
    legacy_id: string
    target_key: string
    error_code: string | null
    error_message: string | null
    http_status: number | null
    attempts: number
    settled_at: Date | string | null
  }>`
    select entity, kind, legacy_id, target_key, error_code, error_message, http_status, attempts, settled_at
    from chatferry.updates
    where job_id = ${jobId} and status = 'rejected'
      and (${filter.code ?? null}::text is null or error_code = ${filter.code ?? null})
      and (${filter.entity ?? null}::text is null or entity = ${filter.entity ?? null})
    order by id
    limit ${filter.limit ?? 1_000_000}`.execute(db)
  return r.rows.map((row) => ({
    entity: row.entity,
    kind: row.kind,
    legacyId: row.legacy_id,
    targetKey: row.target_key,
    code: row.error_code,
    message: row.error_message,
    httpStatus: row.http_status,
    attempts: row.attempts,
    settledAt: row.settled_at === null ? null : new Date(row.settled_at),
  }))
}
