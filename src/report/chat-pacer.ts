/**
 * Paces calls to the chat interface's read endpoints (users, groups, members, messages lists)
 * below a requests-per-minute budget, and waits out a 429 as the platform asks (Retry-After),
 * so `plan --check-target` and `verify` never compete with live traffic for the app's limit.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { DEFAULT_CHAT_REQUESTS_PER_MINUTE } from '../target/config.ts'
import { PlatformError } from '../target/errors.ts'

/**
 * Chat reads per minute when nothing else is said: `verify` and `plan --check-target` pass
 * `target.chatQuota.requestsPerMinute` (the one chat setting; `--chat-rpm` overrides it).
 */
export { DEFAULT_CHAT_REQUESTS_PER_MINUTE }
const MAX_RATE_LIMITED_RETRIES = 8

export interface ChatPacer {
  /** Runs one chat read when the budget allows; retries it after a 429. */
  run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T>
  /** Requests sent so far (retries included). */
  readonly requests: number
  /** 429 answers waited out. */
  readonly rateLimited: number
  readonly requestsPerMinute: number
}

export function createChatPacer(requestsPerMinute: number = DEFAULT_CHAT_REQUESTS_PER_MINUTE): ChatPacer {
  const gapMs = 60_000 / requestsPerMinute
  let next = 0
  let requests = 0
  let rateLimited = 0
  return {
    get requests() {
      return requests
    },
    get rateLimited() {
      return rateLimited
    },
    requestsPerMinute,
    async run(call, signal) {
      for (let attempt = 0; ; attempt++) {
        const now = performance.now()
        const at = Math.max(now, next)
        next = at + gapMs
        if (at > now) {
          await sleep(at - now, undefined, signal ? { signal } : undefined)
        }
        requests++
        try {
          return await call()
        } catch (err) {
          if (err instanceof PlatformError && err.status === 429 && attempt < MAX_RATE_LIMITED_RETRIES) {
            rateLimited++
            const wait = Math.max(err.retryAfterMs ?? 1000, gapMs)
            next = Math.max(next, performance.now() + wait)
            continue
          }
          throw err
        }
      }
    },
  }
}

/** Every item of a paged chat list (`page`/`perPage`), one paced request per page. */
export async function* pagedList<T>(
  pacer: ChatPacer,
  fetchPage: (page: number, perPage: number) => Promise<{ data: T[]; meta: { pagination: { total_pages: number; current_page: number } } }>,
  perPage = 1000,
  signal?: AbortSignal,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const res = await pacer.run(() => fetchPage(page, perPage), signal)
    yield* res.data
    if (res.data.length < perPage || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
      return
    }
  }
}
