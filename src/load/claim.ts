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

/**
 * Claims up to `limit` open batches with fresh lease tokens, oldest first (the one lease mechanism:
 * src/state/lease-units.ts).
 */
export async function claimBatches(run: LoaderRun, limit: number): Promise<Claim[]> {
  const claims: Claim[] = []
  if (limit <= 0) {
    return claims
  }
  const claimed = await run.store.batches.claim({
    jobId: run.jobId,
    owner: run.workerId,
    leaseSeconds: run.settings.leaseSeconds,
    limit,
    rewriteTextLinks: run.options.rewriteTextLinks === true,
  })
  for (const b of claimed) {
    run.counters.textLinksRewritten += b.textLinks.rewritten
    run.counters.textLinksOverLimit += b.textLinks.overLimit
    claims.push({
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
