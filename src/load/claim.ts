/**
 * Claims open batches for this process to hold under a lease: each becomes a {@link Claim}
 * (declared in loader-types.ts: what its requests did so far).
 */
import type { Claim, LoaderRun } from './loader-types.ts'

export type { Claim } from './loader-types.ts'

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
