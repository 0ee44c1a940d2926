import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import { BATCH_UNITS } from '../lease-units.ts'
import type { StateDatabase } from '../schema.ts'
import { claimUnits } from './claim-units.ts'

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
 * Claims up to `limit` open batches of the job without a live lease for `owner`, oldest first, with
 * a fresh lease token each and a lease of `leaseSeconds`, in one statement (`claimUnits` of
 * {@link BATCH_UNITS}, `../lease-units.ts`). The new token fences out whoever held a batch before
 * (a worker whose lease expired): its settle presents the old token and records nothing.
 */
export async function claimBatches(
  db: Kysely<StateDatabase>,
  args: { jobId: string; owner: string; leaseSeconds: number; limit: number },
): Promise<ClaimedBatchRow[]> {
  const rows = await claimUnits<{ entity: Entity; parent_split_age_ms: number | null; parent_code: string | null }>(db, BATCH_UNITS, {
    ...args,
    returning: sql`u.entity,
      (select (extract(epoch from now() - p.settled_at) * 1000)::float8 from chatferry.batches p where p.id = u.parent_id) as parent_split_age_ms,
      (select p.error_code from chatferry.batches p where p.id = u.parent_id) as parent_code`,
  })
  return rows.map((row) => ({
    id: row.id,
    token: row.fence,
    entity: row.entity,
    parentSplitAgeMs: row.parent_split_age_ms === null ? undefined : Number(row.parent_split_age_ms),
    parentCode: row.parent_code ?? undefined,
  }))
}
