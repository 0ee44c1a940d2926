/**
 * The apps' shared request budgets (`chatferry.quota_budgets`): one row per app that every
 * process loading into the app draws its request slots from. The pacing around it (coalescing
 * callers, waiting for a slot) is `src/load/quota-budget.ts`.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { insertQuotaBudget } from './sql/insert-quota-budget.ts'
import { pauseQuotaBudget } from './sql/pause-quota-budget.ts'
import { reserveQuotaSlots, type SlotReservation } from './sql/reserve-quota-slots.ts'

export type { SlotReservation }

export interface QuotaLedger {
  /** Creates the app's budget row when missing. */
  ensure(appId: string): Promise<void>
  /**
   * Reserves `n` consecutive slots `intervalMs` apart when the next free one is at most
   * `maxAheadMs` ahead; otherwise reserves nothing and reports when the next one is.
   */
  reserve(appId: string, n: number, intervalMs: number, maxAheadMs: number): Promise<SlotReservation>
  /** Pauses the app (every process) for `ms` from now: the answer to a 429. */
  pause(appId: string, ms: number): Promise<void>
}

export function createQuotaLedger(db: Kysely<StateDatabase>): QuotaLedger {
  return {
    ensure: (appId) => insertQuotaBudget(db, appId),
    reserve: (appId, n, intervalMs, maxAheadMs) => reserveQuotaSlots(db, { appId, n, intervalMs, maxAheadMs }),
    pause: (appId, ms) => pauseQuotaBudget(db, appId, ms),
  }
}
