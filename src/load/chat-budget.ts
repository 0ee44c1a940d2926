/**
 * The app's chat-interface budget (`target.chatQuota.requestsPerMinute`): one row of
 * `chatferry.quota_budgets`, key `<appId>#chat`, drawn from by every process that makes chat calls
 * for the app (the update lane of a delta run; the loader's read-backs after a bad-row 500,
 * read-back.ts), through the same slot machinery as the import
 * quota (`quota-budget.ts`). It is separate from the import budget: the platform counts chat calls
 * apart from the 60 data-import requests a minute (`articles/rate-limits.mdx`). A 429 from a chat
 * call pauses the row, so every process waits: for `Retry-After` / `X-RateLimit-Reset` (documented
 * for the chat interface: `articles/rate-limits.mdx`), else the wait the text names, else two
 * slot intervals; capped by `maxRetryAfterMs`.
 */
import type { QuotaLedger } from '../state/quota-ledger.ts'
import { PlatformError } from '../target/errors.ts'
import { rateLimitPause, retryWaitFromText } from './pause-on-rate-limit.ts'
import { type ChatBudget, type ChatCallHooks, createQuotaBudget, requestsPerWindow } from './quota-budget.ts'

export type { ChatBudget, ChatCallHooks } from './quota-budget.ts'

/** The budget row of an app's chat calls. */
export function chatBudgetKey(appId: string): string {
  return `${appId}#chat`
}

export interface ChatBudgetOptions {
  readonly appId: string
  /** `target.chatQuota.requestsPerMinute`. */
  readonly requestsPerMinute: number
  /** The window the quota is spread over (`load.quotaWindowMs`). @default 60000 */
  readonly windowMs?: number
  /** The slots' margin (`load.quotaGuardMs`). @default max(1% of the window, 250) */
  readonly guardMs?: number
  /** Longest pause honoured from one 429 (`load.maxRetryAfterMs`). @default 120000 */
  readonly maxRetryAfterMs?: number
  /** 429s waited out in a row before {@link ChatBudget.run} gives up with the last one. @default 8 */
  readonly maxRateLimitedRetries?: number
}

/** Whether a failure is the platform's rate limit. */
export function isRateLimited(err: unknown): err is PlatformError {
  return err instanceof PlatformError && err.status === 429
}

/** Opens (creating when missing) the app's chat budget row. */
export async function createChatBudget(ledger: QuotaLedger, options: ChatBudgetOptions): Promise<ChatBudget> {
  const windowMs = options.windowMs ?? 60_000
  const maxRetryAfterMs = options.maxRetryAfterMs ?? 120_000
  const maxRetries = options.maxRateLimitedRetries ?? 8
  const budget = await createQuotaBudget(ledger, {
    appId: chatBudgetKey(options.appId),
    requestsPerWindow: requestsPerWindow(options.requestsPerMinute, windowMs),
    windowMs,
    ...(options.guardMs !== undefined ? { guardMs: options.guardMs } : {}),
  })
  const counters = { requests: 0, rateLimited: 0 }

  async function pauseAfter(err: PlatformError): Promise<number> {
    const textMs = retryWaitFromText(err.message) ?? retryWaitFromText(err.devMessage)
    const { ms } = rateLimitPause({ headerMs: err.retryAfterMs, textMs }, budget.intervalMs, maxRetryAfterMs)
    await budget.pause(ms)
    return ms
  }

  return {
    ...budget,
    requestsPerMinute: options.requestsPerMinute,
    counters,
    pauseAfter,
    async run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
      // Without an `atSlot` hook every slot sends: an answer always comes back.
      const answer = (await runAtSlot(call, signal ? { signal } : {})) as { value: T }
      return answer.value
    },
    runAtSlot,
  }

  async function runAtSlot<T>(call: () => Promise<T>, hooks: ChatCallHooks): Promise<{ value: T } | undefined> {
    const retries = hooks.maxRateLimitedRetries ?? maxRetries
    for (let attempt = 0; ; attempt++) {
      await budget.take(hooks.signal)
      if (hooks.atSlot !== undefined && !(await hooks.atSlot())) {
        return undefined
      }
      counters.requests++
      try {
        return { value: await call() }
      } catch (err) {
        if (!isRateLimited(err) || attempt >= retries) {
          throw err
        }
        counters.rateLimited++
        const pausedMs = await pauseAfter(err) // not inside `?.()`: its arguments would not run without a hook
        hooks.onRateLimited?.(pausedMs)
      }
    }
  }
}
