/**
 * A sliding-window request limiter per key (app id), in memory. Only requests that are let through
 * are counted: a refused (429) request does not use up the budget (documented: "the request is not
 * processed").
 */

/** The limiter's verdict on one request, with what the rate-limit headers say. */
export interface RateDecision {
  readonly allowed: boolean
  readonly limit: number
  /** Requests still allowed in the window after this one. */
  readonly remaining: number
  /** UNIX seconds when the next slot frees (the oldest counted request leaves the window). */
  readonly resetAtSeconds: number
  /** Whole seconds until a slot frees, at least 1; set when refused. */
  readonly retryAfterSeconds: number
}

/** Sliding-window counters keyed by app (or `chat:<app>`). */
export interface RateLimiter {
  /** Checks and, when allowed, counts one request for `key` at `now` (ms). */
  take(key: string, limit: number, windowMs: number, now?: number): RateDecision
  /** The answer a refused request gets without touching the budget (the `extra429` fault). */
  peek(key: string, limit: number, windowMs: number, now?: number): RateDecision
  /** Forgets every counted request of `key`. */
  reset(key: string): void
}

/** An empty limiter. */
export function createRateLimiter(): RateLimiter {
  const windows = new Map<string, number[]>()

  function prune(key: string, windowMs: number, now: number): number[] {
    let stamps = windows.get(key)
    if (stamps === undefined) {
      stamps = []
      windows.set(key, stamps)
    }
    let drop = 0
    while (drop < stamps.length && (stamps[drop] as number) <= now - windowMs) {
      drop++
    }
    if (drop > 0) {
      stamps.splice(0, drop)
    }
    return stamps
  }

  function decide(stamps: readonly number[], allowed: boolean, limit: number, windowMs: number, now: number): RateDecision {
    const oldest = stamps[0]
    const freesAt = oldest === undefined ? now + windowMs : oldest + windowMs
    return {
      allowed,
      limit,
      remaining: Math.max(0, limit - stamps.length),
      resetAtSeconds: Math.ceil(freesAt / 1000),
      retryAfterSeconds: Math.max(1, Math.ceil((freesAt - now) / 1000)),
    }
  }

  return {
    take(key, limit, windowMs, now = Date.now()) {
      const stamps = prune(key, windowMs, now)
      if (stamps.length >= limit) {
        return decide(stamps, false, limit, windowMs, now)
      }
      stamps.push(now)
      return decide(stamps, true, limit, windowMs, now)
    },
    peek(key, limit, windowMs, now = Date.now()) {
      const stamps = prune(key, windowMs, now)
      return decide(stamps, stamps.length < limit, limit, windowMs, now)
    },
    reset(key) {
      windows.delete(key)
    },
  }
}

/**
 * The rate-limit headers, in the newer documented spelling (`X-RateLimit-*`, facts §3), plus
 * `Retry-After` on refusals.
 */
export function rateLimitHeaders(d: RateDecision): Record<string, string | number> {
  return {
    'X-RateLimit-Limit': d.limit,
    'X-RateLimit-Remaining': d.allowed ? d.remaining : 0,
    'X-RateLimit-Reset': d.resetAtSeconds,
    ...(d.allowed ? {} : { 'Retry-After': d.retryAfterSeconds }),
  }
}
