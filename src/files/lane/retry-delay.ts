/**
 * How long a file waits before its next attempt after a retryable failure: the source's
 * `Retry-After` when it gave one, else exponential backoff from 1 s (×2 per attempt, at most
 * 5 minutes) with ±20 % jitter so many files failing together do not return together.
 */
const BASE_MS = 1000
const MAX_MS = 5 * 60_000

export function retryDelayMs(attemptsSoFar: number, retryAfterMs: number | undefined, random: () => number = Math.random): number {
  if (retryAfterMs !== undefined && retryAfterMs >= 0) {
    return Math.min(retryAfterMs, MAX_MS)
  }
  const exp = Math.min(MAX_MS, BASE_MS * 2 ** Math.max(0, attemptsSoFar))
  return Math.round(exp * (0.8 + 0.4 * random()))
}
