/**
 * The app's request quota as one budget row in the ledger database, shared by every process that
 * loads into the app (with `load.quotaScope: endpoint`, one row per import endpoint of the app). It is a GCRA (generic cell rate algorithm) with no burst: each request takes
 * the next slot, `interval` after the previous one, in the database's clock, so N processes
 * together send at most the quota in any window, and a 429 pushes every process's next slot out.
 * The chat budget (chat-budget.ts) is one such row; its interface ({@link ChatBudget}) is declared
 * here beside {@link QuotaBudget}, so that the loader's shared types need not import chat-budget.ts.
 */
import type { QuotaLedger, SlotReservation } from '../state/quota-ledger.ts'
import type { PlatformError } from '../target/errors.ts'
import { ENTITIES, type Entity } from '../target/schemas.ts'

export interface QuotaBudgetOptions {
  readonly appId: string
  /** Requests allowed per window (the platform's quota). */
  readonly requestsPerWindow: number
  /** The platform's window. @default 60000 */
  readonly windowMs?: number
  /**
   * Safety margin added to the window before dividing it into slots, so that jitter between
   * taking a slot and the request's arrival cannot put one request too many into a window.
   * @default max(1% of the window, 250 ms)
   */
  readonly guardMs?: number
  /** How far ahead of now a slot may be reserved; a caller waits (polling) rather than queueing further. @default 2000 */
  readonly maxAheadMs?: number
}

export interface QuotaBudget {
  /** Milliseconds between two slots. */
  readonly intervalMs: number
  /** Waits for and takes one request slot. Rejects with the signal's reason when aborted. */
  take(signal?: AbortSignal): Promise<void>
  /** Pauses the whole app (every process) for `ms` from now: the answer to a 429. */
  pause(ms: number): Promise<void>
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (ms <= 0) {
    return Promise.resolve()
  }
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason ?? new Error('aborted'))
    }
    if (signal?.aborted) {
      onAbort()
    } else {
      signal?.addEventListener('abort', onAbort, { once: true })
    }
  })
}

/** The app's chat budget: a {@link QuotaBudget} whose calls wait out a 429 (made by `createChatBudget`, chat-budget.ts). */
export interface ChatBudget extends QuotaBudget {
  readonly requestsPerMinute: number
  /** Pauses every process after a 429 for the wait it names; returns the pause in ms. */
  pauseAfter(err: PlatformError): Promise<number>
  /**
   * Takes a slot, makes the call; after a 429 pauses the budget and makes it again (at a new slot),
   * up to `maxRateLimitedRetries` times. Any other failure is the caller's.
   */
  run<T>(call: () => Promise<T>, signal?: AbortSignal): Promise<T>
  /**
   * {@link run} with hooks: `atSlot` runs between each slot and its call (it may throw to stop, or
   * answer false: nothing is sent and `undefined` comes back), `onRateLimited` after each 429's
   * pause; `maxRateLimitedRetries` overrides the budget's.
   */
  runAtSlot<T>(call: () => Promise<T>, hooks: ChatCallHooks): Promise<{ value: T } | undefined>
  /** Calls made through {@link run} (retries included) and 429s answered to them, in this process. */
  readonly counters: { readonly requests: number; readonly rateLimited: number }
}

/** See {@link ChatBudget.runAtSlot}. */
export interface ChatCallHooks {
  readonly signal?: AbortSignal
  readonly atSlot?: () => Promise<boolean>
  readonly onRateLimited?: (pauseMs: number) => void
  readonly maxRateLimitedRetries?: number
}

/** The budget's arithmetic, from the quota: how slots are spaced and how many one reservation takes. */
export interface QuotaSlots {
  /** Milliseconds between two slots: `(window + guard) / requests per window`. */
  readonly intervalMs: number
  readonly guardMs: number
  /** How far ahead a slot may be reserved: at least one interval. */
  readonly maxAheadMs: number
  /** The most slots one statement reserves: as many as fit in `maxAheadMs`, at least one. */
  readonly maxPerReservation: number
}

/** Computes {@link QuotaSlots} from the budget's options (defaults as documented there). */
export function quotaSlots(options: Omit<QuotaBudgetOptions, 'appId'>): QuotaSlots {
  const windowMs = options.windowMs ?? 60_000
  const guardMs = options.guardMs ?? Math.max(windowMs * 0.01, 250)
  const intervalMs = (windowMs + guardMs) / options.requestsPerWindow
  const maxAheadMs = Math.max(options.maxAheadMs ?? 2000, intervalMs)
  return { intervalMs, guardMs, maxAheadMs, maxPerReservation: Math.max(1, Math.floor(maxAheadMs / intervalMs)) }
}

/** The platform's per-minute quota over a window of `windowMs`. */
export function requestsPerWindow(requestsPerMinute: number, windowMs: number): number {
  return (requestsPerMinute * windowMs) / 60_000
}

/** How long each of `n` callers sharing one reservation waits: its own slot, one interval after the previous. */
export function slotWaits(r: SlotReservation & { slotMs: number }, n: number, intervalMs: number): number[] {
  return Array.from({ length: n }, (_, i) => r.slotMs + i * intervalMs - r.nowMs)
}

/**
 * How long to wait before trying again when nothing could be reserved (the next slot is beyond
 * `maxAheadMs`, or a 429 paused the app): until a slot is near, plus up to one interval of jitter
 * (`random` in [0, 1)) so that processes do not all come back at once; at least 10 ms.
 */
export function retryReservationMs(r: SlotReservation, slots: QuotaSlots, random: number): number {
  return Math.max(10, r.tatMs - slots.maxAheadMs - r.nowMs + random * slots.intervalMs)
}

interface Waiter {
  /** The caller's slot is `ms` from now. */
  wake(ms: number): void
  /** The reservation failed. */
  settle(err: unknown): void
}

/** Creates the budget row when missing and returns a handle on it. */
export async function createQuotaBudget(ledger: QuotaLedger, options: QuotaBudgetOptions): Promise<QuotaBudget> {
  const slots = quotaSlots(options)
  const { intervalMs, maxAheadMs, maxPerReservation } = slots
  const appId = options.appId
  await ledger.ensure(appId)

  // Takes are coalesced per process: the callers waiting at one moment share one statement that
  // reserves that many consecutive slots (never more than fit in `maxAheadMs`), so a busy process
  // does not queue on the budget row once per request. Each caller still sends at its own slot.
  const waiters: Waiter[] = []
  let pumping = false
  let idleWait: AbortController | undefined

  async function pump(): Promise<void> {
    pumping = true
    try {
      while (waiters.length > 0) {
        const n = Math.min(waiters.length, maxPerReservation)
        let row: SlotReservation
        try {
          row = await ledger.reserve(appId, n, intervalMs, maxAheadMs)
        } catch (err) {
          for (const w of waiters.splice(0, n)) {
            w.settle(err)
          }
          continue
        }
        if (row.slotMs !== null) {
          const waits = slotWaits({ ...row, slotMs: row.slotMs }, n, intervalMs)
          // Callers that gave up meanwhile leave their slot unused, as a sleeping caller would.
          for (const [i, w] of waiters.splice(0, n).entries()) {
            w.wake(waits[i] as number)
          }
          continue
        }
        // Someone reserved far ahead (or a 429 paused the app): come back when a slot is near.
        idleWait = new AbortController()
        await sleep(retryReservationMs(row, slots, Math.random()), idleWait.signal).catch(() => {})
        idleWait = undefined
      }
    } finally {
      pumping = false
    }
  }

  function take(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) {
        return reject(signal.reason ?? new Error('aborted'))
      }
      const onAbort = () => {
        const i = waiters.indexOf(waiter)
        if (i >= 0) {
          waiters.splice(i, 1)
        }
        if (waiters.length === 0) {
          idleWait?.abort()
        }
        reject(signal?.reason ?? new Error('aborted'))
      }
      const waiter: Waiter = {
        wake(ms) {
          signal?.removeEventListener('abort', onAbort)
          sleep(ms, signal).then(resolve, reject)
        },
        settle(err) {
          signal?.removeEventListener('abort', onAbort)
          reject(err)
        },
      }
      signal?.addEventListener('abort', onAbort, { once: true })
      waiters.push(waiter)
      if (!pumping) {
        void pump()
      }
    })
  }

  const pause = (ms: number): Promise<void> => ledger.pause(appId, ms)

  return { intervalMs, take, pause }
}

/** `load.quotaScope`: one budget for the four import endpoints, or one per endpoint. */
export type QuotaScope = 'app' | 'endpoint'

/** The budget of each import endpoint; with scope `app` they are one and the same. */
export type QuotaBudgets = Readonly<Record<Entity, QuotaBudget>>

/**
 * The budget row's key: the app id for scope `app` (every endpoint draws from it), else the app id
 * and the endpoint, so that each endpoint has the whole quota to itself and a 429 pauses only it.
 */
export function budgetKey(appId: string, scope: QuotaScope, entity: Entity): string {
  return scope === 'app' ? appId : `${appId}#data_import/${entity}`
}

/** Opens the budgets of the four import endpoints for `scope` (one shared budget for `app`). */
export async function openQuotaBudgets(ledger: QuotaLedger, options: QuotaBudgetOptions & { readonly scope: QuotaScope }): Promise<QuotaBudgets> {
  const { scope, ...rest } = options
  if (scope === 'app') {
    const shared = await createQuotaBudget(ledger, rest)
    return Object.fromEntries(ENTITIES.map((e) => [e, shared])) as Record<Entity, QuotaBudget>
  }
  const entries = await Promise.all(
    ENTITIES.map(async (e) => [e, await createQuotaBudget(ledger, { ...rest, appId: budgetKey(options.appId, scope, e) })] as const),
  )
  return Object.fromEntries(entries) as Record<Entity, QuotaBudget>
}
