/**
 * The management interface paced and retried like every other interface chatferry calls: every
 * call takes a slot of one budget row in the fleet's ledger (`src/load/quota-budget.ts`, keyed by
 * the management URL and key, so every fleet process on the same account shares it and a 429 seen
 * by one pauses them all); a 429 is waited out for the wait it names (`Retry-After`, or the text's
 * "retry for seconds after N", `src/load/pause-on-rate-limit.ts`) and the call sent again; a 5xx,
 * a timeout or a lost connection is retried with exponential backoff — for calls that are safe to
 * repeat. Creating an app or a webhook is not repeated on those (the first may have been done):
 * the caller finds it again (provision-app.ts, provision-setup.ts). A call still failing
 * `giveUpAfterMs` after its first failure throws the last error: the tenant fails for this pass
 * with its progress kept in its binding, and the next pass sends only what is missing.
 *
 * The platform publishes no rate limit for the management interface (facts §7 gap 10), nor the
 * form of its 429: the default pace, {@link DEFAULT_MANAGEMENT_REQUESTS_PER_MINUTE}, is assumed
 * (the documented data-import limit: the stricter guess), and `management.requestsPerMinute` sets it.
 */
import { createHash } from 'node:crypto'

import { retryWaitFromText } from '../load/pause-on-rate-limit.ts'
import { createQuotaBudget } from '../load/quota-budget.ts'
import { sleep } from '../load/sleep.ts'
import type { QuotaLedger } from '../state/quota-ledger.ts'
import { createManagementClient, type ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'

/** Management calls per minute when the fleet file says nothing (assumed: see the header). */
export const DEFAULT_MANAGEMENT_REQUESTS_PER_MINUTE = 60
/** How long a call keeps being retried after its first failure. */
export const DEFAULT_MANAGEMENT_GIVE_UP_AFTER_MS = 120_000
/** The longest wait a 429 is taken at its word for. */
const MAX_RETRY_AFTER_MS = 60_000
const BACKOFF_FIRST_MS = 500
const BACKOFF_MAX_MS = 15_000

/** The calls that may be sent again after a failure that leaves their fate unknown. */
const NOT_REPEATABLE = new Set<keyof ManagementClient>(['createApp', 'createWebhook'])

export interface ManagementPacing {
  readonly requestsPerMinute: number
  readonly giveUpAfterMs: number
}

/** What the paced client has sent: every request, and the 429s and other failures retried. */
export interface ManagementCallStats {
  requests: number
  rateLimited: number
  retried: number
}

export interface PacedManagement {
  readonly client: ManagementClient
  readonly stats: ManagementCallStats
}

/** The budget row of a management account: its URL and key, hashed (the key never stored). */
export function managementBudgetKey(url: string, key: string): string {
  return `management:${createHash('sha256').update(url).update('\n').update(key).digest('hex').slice(0, 16)}`
}

/** The wait a 429 asks for: its header, else its text, else two slots. */
function rateLimitWaitMs(err: PlatformError, intervalMs: number): number {
  return Math.min(MAX_RETRY_AFTER_MS, err.retryAfterMs ?? retryWaitFromText(err.message) ?? 2 * intervalMs)
}

/** Wraps `mgmt` so that every call is paced on the shared budget and retried as described above. */
export async function pacedManagement(
  mgmt: ManagementClient,
  o: { quota: QuotaLedger; budgetKey: string; pacing: ManagementPacing; signal?: AbortSignal },
): Promise<PacedManagement> {
  const budget = await createQuotaBudget(o.quota, { appId: o.budgetKey, requestsPerWindow: o.pacing.requestsPerMinute, windowMs: 60_000 })
  const stats: ManagementCallStats = { requests: 0, rateLimited: 0, retried: 0 }

  async function run<T>(name: keyof ManagementClient, call: () => Promise<T>): Promise<T> {
    let firstFailureAt: number | undefined
    for (let attempt = 0; ; attempt++) {
      await budget.take(o.signal)
      stats.requests++
      try {
        return await call()
      } catch (err) {
        if (!(err instanceof PlatformError)) {
          throw err
        }
        firstFailureAt ??= Date.now()
        const late = Date.now() - firstFailureAt >= o.pacing.giveUpAfterMs
        if (err.status === 429 && !late) {
          stats.rateLimited++
          await budget.pause(rateLimitWaitMs(err, budget.intervalMs))
          continue
        }
        if (err.retryable && err.status !== 429 && !NOT_REPEATABLE.has(name) && !late) {
          stats.retried++
          const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** attempt)
          await sleep(backoff * (0.5 + Math.random() / 2), o.signal)
          continue
        }
        throw err
      }
    }
  }

  const client = Object.fromEntries(
    Object.entries(mgmt).map(([name, fn]) => [
      name,
      (...args: unknown[]) => run(name as keyof ManagementClient, () => (fn as (...a: unknown[]) => Promise<unknown>)(...args)),
    ]),
  ) as unknown as ManagementClient
  return { client, stats }
}

/** The fleet file's `management:` as a paced client on the fleet's ledger. */
export function fleetManagement(
  management: { url: string; key: string; secret: string; requestsPerMinute?: number | undefined; giveUpAfterMs?: number | undefined },
  quota: QuotaLedger,
  signal?: AbortSignal,
): Promise<PacedManagement> {
  return pacedManagement(createManagementClient(management), {
    quota,
    budgetKey: managementBudgetKey(management.url, management.key),
    pacing: {
      requestsPerMinute: management.requestsPerMinute ?? DEFAULT_MANAGEMENT_REQUESTS_PER_MINUTE,
      giveUpAfterMs: management.giveUpAfterMs ?? DEFAULT_MANAGEMENT_GIVE_UP_AFTER_MS,
    },
    ...(signal ? { signal } : {}),
  })
}
