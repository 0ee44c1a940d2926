/**
 * The app's request quota as one budget row in the ledger database, shared by every process that
 * loads into the app. It is a GCRA (generic cell rate algorithm) with no burst: each request takes
 * the next slot, `interval` after the previous one, in the database's clock, so N processes
 * together send at most the quota in any window, and a 429 pushes every process's next slot out.
 */
import { sql, type Kysely } from 'kysely'
import type { StateDatabase } from '../state/schema.ts'

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
  if (ms <= 0) return Promise.resolve()
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(signal?.reason ?? new Error('aborted'))
    }
    if (signal?.aborted) onAbort()
    else signal?.addEventListener('abort', onAbort, { once: true })
  })
}

interface Waiter {
  /** The caller's slot is `ms` from now. */
  wake(ms: number): void
  /** The reservation failed. */
  settle(err: unknown): void
}

/** Creates the budget row when missing and returns a handle on it. */
export async function createQuotaBudget(db: Kysely<StateDatabase>, options: QuotaBudgetOptions): Promise<QuotaBudget> {
  const windowMs = options.windowMs ?? 60_000
  const guardMs = options.guardMs ?? Math.max(windowMs * 0.01, 250)
  const intervalMs = (windowMs + guardMs) / options.requestsPerWindow
  const maxAheadMs = Math.max(options.maxAheadMs ?? 2000, intervalMs)
  const appId = options.appId
  await sql`insert into chatferry.quota_budgets (app_id) values (${appId}) on conflict do nothing`.execute(db)

  // Takes are coalesced per process: the callers waiting at one moment share one statement that
  // reserves that many consecutive slots (never more than fit in `maxAheadMs`), so a busy process
  // does not queue on the budget row once per request. Each caller still sends at its own slot.
  const maxPerReservation = Math.max(1, Math.floor(maxAheadMs / intervalMs))
  const waiters: Waiter[] = []
  let pumping = false
  let idleWait: AbortController | undefined

  /** One statement: reserves `n` slots when the next one is near enough, else reports when it will be. */
  async function reserve(n: number) {
    const r = await sql<{ slot_ms: number | null; now_ms: number; tat_ms: number }>`
      with n as (select extract(epoch from clock_timestamp()) * 1000 as now_ms),
      u as (
        update chatferry.quota_budgets b
        set tat_ms = greatest(b.tat_ms, b.paused_until_ms, n.now_ms) + ${n * intervalMs}::float8,
            slots_taken = b.slots_taken + ${n}, updated_at = now()
        from n
        where b.app_id = ${appId} and greatest(b.tat_ms, b.paused_until_ms) <= n.now_ms + ${maxAheadMs}::float8
        returning b.tat_ms - ${n * intervalMs}::float8 as slot_ms
      )
      select (select slot_ms from u)::float8 as slot_ms, n.now_ms::float8 as now_ms,
        (select greatest(tat_ms, paused_until_ms) from chatferry.quota_budgets where app_id = ${appId})::float8 as tat_ms
      from n`.execute(db)
    const row = r.rows[0]
    if (row === undefined) throw new Error(`the quota budget of ${appId} is missing`)
    return row
  }

  async function pump(): Promise<void> {
    pumping = true
    try {
      while (waiters.length > 0) {
        const n = Math.min(waiters.length, maxPerReservation)
        let row: Awaited<ReturnType<typeof reserve>>
        try {
          row = await reserve(n)
        } catch (err) {
          for (const w of waiters.splice(0, n)) w.settle(err)
          continue
        }
        if (row.slot_ms !== null) {
          const slot = row.slot_ms
          // Callers that gave up meanwhile leave their slot unused, as a sleeping caller would.
          for (const [i, w] of waiters.splice(0, n).entries()) w.wake(slot + i * intervalMs - row.now_ms)
          continue
        }
        // Someone reserved far ahead (or a 429 paused the app): come back when a slot is near.
        idleWait = new AbortController()
        await sleep(Math.max(10, row.tat_ms - maxAheadMs - row.now_ms + Math.random() * intervalMs), idleWait.signal).catch(() => {})
        idleWait = undefined
      }
    } finally {
      pumping = false
    }
  }

  function take(signal?: AbortSignal): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'))
      const onAbort = () => {
        const i = waiters.indexOf(waiter)
        if (i >= 0) waiters.splice(i, 1)
        if (waiters.length === 0) idleWait?.abort()
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
      if (!pumping) void pump()
    })
  }

  async function pause(ms: number): Promise<void> {
    await sql`
      update chatferry.quota_budgets
      set paused_until_ms = greatest(paused_until_ms, extract(epoch from clock_timestamp()) * 1000 + ${ms}::float8),
          pauses = pauses + 1, updated_at = now()
      where app_id = ${appId}`.execute(db)
  }

  return { intervalMs, take, pause }
}
