/**
 * What happens when a 429 arrives: the request is counted as rate-limited, the whole app pauses
 * (every process, through the shared budget row) for the platform's Retry-After /
 * X-RateLimit-Reset (parsed by the client into `retryAfterMs`), capped by `load.maxRetryAfterMs`,
 * or for two slot intervals when the answer named no wait; then the same request is sent again
 * at its next slot (send-batch.ts). A 429 never counts as a failure of the batch.
 */
import type { PlatformError } from '../target/errors.ts'
import type { Claim } from './claim.ts'
import type { LoaderRun } from './loader-run.ts'

/** How long the app pauses after a 429: the platform's wait, capped; two slot intervals when it named none. */
export function rateLimitPauseMs(retryAfterMs: number | undefined, intervalMs: number, maxRetryAfterMs: number): number {
  return Math.min(maxRetryAfterMs, retryAfterMs ?? intervalMs * 2)
}

/** Records the 429 on the claim and the counters, and pauses the app's budget. */
export async function pauseOnRateLimit(run: LoaderRun, c: Claim, err: PlatformError): Promise<void> {
  c.rateLimited++
  run.counters.rateLimited++
  const wait = rateLimitPauseMs(err.retryAfterMs, run.budget.intervalMs, run.settings.maxRetryAfterMs)
  c.lastRetryAfterMs = wait
  run.log.warn({ batch: c.batchId, retryAfterMs: wait }, '429: pausing the app')
  await run.budget.pause(wait)
}
