/**
 * What happens when a 429 arrives: the request is counted as rate-limited, the whole app pauses
 * (every process, through the shared budget row; with `load.quotaScope: endpoint`, every process
 * sending to that endpoint) for the platform's wait, capped by `load.maxRetryAfterMs`; then the
 * same request is sent again at its next slot (send-batch.ts). A 429 never counts as a failure of
 * the batch.
 *
 * Where the wait comes from, first found wins:
 * 1. `Retry-After` / `X-RateLimit-Reset` (parsed by the client into `retryAfterMs`);
 * 2. the 429's text: the data-import endpoints send no rate-limit header at all (facts i12 §2),
 *    only the documented words "…Please retry for seconds after 58." (also read: the older
 *    "…retry after 58 seconds.");
 * 3. neither: {@link DEFAULT_RATE_LIMIT_PAUSE_SLOTS} slot intervals.
 */
import type { PlatformError } from '../target/errors.ts'
import type { Claim, LoaderRun } from './loader-types.ts'

/** Slot intervals paused after a 429 that names no wait (2 s at the documented 60 requests per minute). */
export const DEFAULT_RATE_LIMIT_PAUSE_SLOTS = 2

const TEXT_WAITS: readonly RegExp[] = [
  // Documented, verbatim word order: "Please retry for seconds after 58."
  /retry\s+for\s+seconds\s+after\s+(\d+(?:\.\d+)?)/i,
  // The older wording: "Please retry after 58 seconds." (also "retry after 58 s", "retry after 1 second").
  /retry\s+after\s+(\d+(?:\.\d+)?)\s*(?:seconds?|secs?|s)\b/i,
]

/**
 * The wait a 429's text names, in milliseconds, or undefined when it names none. Reads the
 * documented "retry for seconds after N" and the older "retry after N seconds"; N is seconds.
 */
export function retryWaitFromText(text: string | undefined): number | undefined {
  if (text === undefined) {
    return undefined
  }
  for (const re of TEXT_WAITS) {
    const m = re.exec(text)
    if (m !== null) {
      const seconds = Number(m[1])
      if (Number.isFinite(seconds)) {
        return seconds * 1000
      }
    }
  }
  return undefined
}

/** Where a pause's length came from (logged, and pinned by tests). */
export type RateLimitWaitSource = 'header' | 'text' | 'default'

/**
 * How long the app pauses after a 429: the header's wait, else the text's, else
 * {@link DEFAULT_RATE_LIMIT_PAUSE_SLOTS} slot intervals; capped by `maxRetryAfterMs`.
 */
export function rateLimitPause(
  wait: { headerMs: number | undefined; textMs: number | undefined },
  intervalMs: number,
  maxRetryAfterMs: number,
): { ms: number; source: RateLimitWaitSource } {
  const [ms, source]: [number, RateLimitWaitSource] =
    wait.headerMs !== undefined
      ? [wait.headerMs, 'header']
      : wait.textMs !== undefined
        ? [wait.textMs, 'text']
        : [intervalMs * DEFAULT_RATE_LIMIT_PAUSE_SLOTS, 'default']
  return { ms: Math.min(maxRetryAfterMs, ms), source }
}

/** Records the 429 on the claim and the counters, and pauses the budget the request drew from. */
export async function pauseOnRateLimit(run: LoaderRun, c: Claim, err: PlatformError): Promise<void> {
  c.rateLimited++
  run.counters.rateLimited++
  const budget = run.budgetFor(c.entity)
  const textMs = retryWaitFromText(err.message) ?? retryWaitFromText(err.devMessage)
  const { ms, source } = rateLimitPause({ headerMs: err.retryAfterMs, textMs }, budget.intervalMs, run.settings.maxRetryAfterMs)
  c.lastRetryAfterMs = ms
  run.counters.pauses++
  run.counters.pausedMs += ms
  run.log.warn({ batch: c.batchId, retryAfterMs: ms, from: source }, '429: pausing the app')
  await budget.pause(ms)
}
