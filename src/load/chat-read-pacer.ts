/**
 * The loader's own small budget for chat reads (the read-back after a bad-row 500, read-back.ts):
 * one request at most every `60 000 / requestsPerMinute` ms per process, and a 429 waited out as
 * the platform asks. Chat reads do not draw from the import quota (the platform counts them
 * separately: the core limit, 10,000 per minute), so they never slow the load's own requests.
 *
 * Local to one process for now: the app's chat budget shared by every process in the ledger (as
 * the import quota is; `chat-budget.ts`, being built on another branch, with the same `run(call,
 * signal)` shape) is meant to replace it.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { PlatformError } from '../target/errors.ts'

/** Chat reads per minute the loader allows itself per process: a sixteenth of the documented core limit. */
export const READ_BACK_CHAT_REQUESTS_PER_MINUTE = 600
/** 429s waited out for one read before it counts as failed. */
const MAX_RATE_LIMITED = 4
/** The longest wait honoured from one chat 429. */
const MAX_WAIT_MS = 30_000

export interface ChatReadPacer {
  /**
   * Runs one chat read at the next free slot; again after a 429 (at most a few times). `signal`
   * cuts the waits short (the loader is stopping), never a request in flight.
   */
  run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T>
  /** Requests sent so far (429s included) and 429s answered, in this process. */
  readonly counters: { readonly requests: number; readonly rateLimited: number }
}

export function createChatReadPacer(requestsPerMinute: number = READ_BACK_CHAT_REQUESTS_PER_MINUTE): ChatReadPacer {
  const gapMs = 60_000 / requestsPerMinute
  let next = 0
  const counters = { requests: 0, rateLimited: 0 }
  return {
    counters,
    async run(call, signal) {
      for (let limited = 0; ; limited++) {
        const now = performance.now()
        const at = Math.max(now, next)
        next = at + gapMs
        if (at > now) {
          await sleep(at - now, undefined, signal ? { signal } : undefined)
        }
        counters.requests++
        try {
          return await call()
        } catch (err) {
          if (err instanceof PlatformError && err.status === 429 && limited < MAX_RATE_LIMITED) {
            counters.rateLimited++
            next = Math.max(next, performance.now() + Math.min(MAX_WAIT_MS, Math.max(err.retryAfterMs ?? 1000, gapMs)))
            continue
          }
          throw err
        }
      }
    },
  }
}
