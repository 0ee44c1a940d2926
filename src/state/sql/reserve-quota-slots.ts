import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What a reservation found, in the database's clock (epoch ms). */
export interface SlotReservation {
  /** The first of the reserved slots; null when the next free slot is too far ahead (nothing was reserved). */
  readonly slotMs: number | null
  readonly nowMs: number
  /** The next free slot after this statement (the theoretical arrival time, or the end of a pause). */
  readonly tatMs: number
}

/**
 * Reserves `n` consecutive request slots `intervalMs` apart on the app's budget row, in one
 * statement, when the next free slot is at most `maxAheadMs` ahead (GCRA with no burst; a pause
 * from a 429 pushes the next slot out). The row update serialises every process of the app; the
 * database's `clock_timestamp()` is the one clock they all share, so their hosts' clocks do not matter.
 *
 * The slot and the `nowMs` the caller waits from are read *after* the row lock is taken (in the
 * update's SET and RETURNING): a statement that queued behind another process's reservation would
 * otherwise be given a slot, and a wait, in the time it started, and send late by as long as it
 * queued — the late requests of several processes then fall into one window of the platform. The
 * clock read before the lock only decides whether a slot is near enough to reserve at all.
 */
export async function reserveQuotaSlots(
  db: Kysely<StateDatabase>,
  args: { appId: string; n: number; intervalMs: number; maxAheadMs: number },
): Promise<SlotReservation> {
  const { appId, n, intervalMs, maxAheadMs } = args
  const r = await sql<{ slot_ms: number | null; now_ms: number; tat_ms: number }>`
    with n as (select extract(epoch from clock_timestamp()) * 1000 as now_ms),
    u as (
      update chatferry.quota_budgets b
      set tat_ms = greatest(b.tat_ms, b.paused_until_ms, extract(epoch from clock_timestamp()) * 1000) + ${n * intervalMs}::float8,
          slots_taken = b.slots_taken + ${n}, updated_at = now()
      from n
      where b.app_id = ${appId} and greatest(b.tat_ms, b.paused_until_ms) <= n.now_ms + ${maxAheadMs}::float8
      returning b.tat_ms - ${n * intervalMs}::float8 as slot_ms, extract(epoch from clock_timestamp()) * 1000 as now_ms
    )
    select (select slot_ms from u)::float8 as slot_ms,
      coalesce((select now_ms from u), extract(epoch from clock_timestamp()) * 1000)::float8 as now_ms,
      (select greatest(tat_ms, paused_until_ms) from chatferry.quota_budgets where app_id = ${appId})::float8 as tat_ms`.execute(db)
  const row = r.rows[0]
  if (row === undefined) {
    throw new Error(`the quota budget of ${appId} is missing`)
  }
  return { slotMs: row.slot_ms, nowMs: row.now_ms, tatMs: row.tat_ms }
}
