import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

export interface ClaimedBatchRow {
  readonly id: number
  /** The fresh lease token: only a write that presents it (and an unexpired lease) is recorded. */
  readonly token: string
  readonly entity: Entity
  /** How long ago the batch this one was split from was split (ms, database clock), for split halves. */
  readonly parentSplitAgeMs: number | undefined
  /** The error code recorded on the batch this one was split from (e.g. the loader's bad-row isolation). */
  readonly parentCode: string | undefined
}

/**
 * Claims open batches for `owner` with a fresh lease token each and a lease of `leaseSeconds`, in
 * one statement. The new token fences out whoever held the batch before (a worker whose lease
 * expired): its settle presents the old token and records nothing. Batches no longer open are absent.
 */
export async function claimBatches(
  db: Kysely<StateDatabase>,
  args: { jobId: string; batchIds: readonly number[]; owner: string; leaseSeconds: number },
): Promise<ClaimedBatchRow[]> {
  const r = await sql<{ id: number; token: string; entity: Entity; parent_split_age_ms: number | null; parent_code: string | null }>`
    update chatferry.batches b
    set lease_token = gen_random_uuid(), lease_owner = ${args.owner},
        lease_expires_at = now() + ${args.leaseSeconds} * interval '1 second', claims = claims + 1
    where id = any(${args.batchIds}::bigint[]) and job_id = ${args.jobId} and status = 'open'
    returning id, lease_token::text as token, entity,
      (select (extract(epoch from now() - p.settled_at) * 1000)::float8 from chatferry.batches p where p.id = b.parent_id) as parent_split_age_ms,
      (select p.error_code from chatferry.batches p where p.id = b.parent_id) as parent_code`.execute(db)
  return r.rows.map((row) => ({
    id: Number(row.id),
    token: row.token,
    entity: row.entity,
    parentSplitAgeMs: row.parent_split_age_ms === null ? undefined : Number(row.parent_split_age_ms),
    parentCode: row.parent_code ?? undefined,
  }))
}
