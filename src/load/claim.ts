/** A batch this process holds under a lease, and what its requests did so far. */
import type { BatchItem } from '../state/batch-ledger.ts'
import type { Entity } from '../target/schemas.ts'
import type { LoaderRun } from './loader-run.ts'

export interface Claim {
  batchId: number
  /** The lease token: every write about this batch presents it (fencing). */
  token: string
  entity: Entity
  items: BatchItem[]
  claimedAt: number
  /** The local clock when the lease was last claimed or renewed (it runs `load.leaseSeconds` from about then). */
  renewedAt: number
  /** A renewal found the lease gone (expired or taken over): nothing about this claim will be recorded. */
  leaseLost: boolean
  requests: number
  rateLimited: number
  firstSentAt: number | undefined
  lastStatus: number | undefined
  lastLatencyMs: number | undefined
  lastRetryAfterMs: number | undefined
  /** When this claim's first request failed. */
  firstFailureAt: number | undefined
  /** When the batch this one was split from was split (local clock), for split halves. */
  parentSplitAt: number | undefined
  /** The error code of the batch this one was split from (isolate-rows.ts `ISOLATION_CODE`: a suspect sent alone). */
  parentCode: string | undefined
}

/** Claims the fetched batches with fresh lease tokens (SQL: src/state/sql/claim-batches.ts). Batches no longer open are absent. */
export async function claimBatches(run: LoaderRun, batchIds: readonly number[]): Promise<Map<number, Claim>> {
  const claims = new Map<number, Claim>()
  if (batchIds.length === 0) {
    return claims
  }
  const claimed = await run.store.batches.claim({ jobId: run.jobId, batchIds, owner: run.workerId, leaseSeconds: run.settings.leaseSeconds })
  for (const b of claimed) {
    claims.set(b.id, {
      batchId: b.id,
      token: b.token,
      entity: b.entity,
      items: b.items,
      claimedAt: b.claimedAt,
      renewedAt: b.claimedAt,
      leaseLost: false,
      requests: 0,
      rateLimited: 0,
      firstSentAt: undefined,
      lastStatus: undefined,
      lastLatencyMs: undefined,
      lastRetryAfterMs: undefined,
      firstFailureAt: undefined,
      parentSplitAt: b.parentSplitAgeMs === undefined ? undefined : b.claimedAt - b.parentSplitAgeMs,
      parentCode: b.parentCode,
    })
  }
  return claims
}
