/**
 * A reservation that queues behind another process's lock on the budget row is given its slot, and
 * the clock its caller waits from, as of when it got the row — not as of when its statement began.
 * Before, a statement that waited 600 ms for the row came back with `nowMs` 600 ms in the past and,
 * on an idle budget, a slot at that past instant: its caller then waited from the answer's arrival
 * and sent 600 ms after its slot, into the window of later slots (a 429 under three workers in CI).
 */
import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'

let tdb: TestDatabase
let store: LedgerStore

beforeAll(async () => {
  tdb = await createTestDatabase('cf_quota_clock')
  store = await openLedger({ url: tdb.url })
})
afterAll(async () => {
  await store?.close()
  await dropWithin(tdb)
})

const HOLD_MS = 600

it.each([
  { name: 'an idle budget', tatAheadMs: null },
  { name: 'a busy budget (next slot 1.5 s ahead)', tatAheadMs: 1500 },
])('$name: a reservation queued behind the row lock answers in the clock of when it got the row', async ({ tatAheadMs }) => {
  const appId = `clock-${tatAheadMs ?? 'idle'}`
  await store.quota.ensure(appId)
  const holder = new pg.Client({ connectionString: tdb.url })
  await holder.connect()
  try {
    await holder.query('begin')
    const locked = await holder.query<{ t: number; tat_ms: number }>(
      `update chatferry.quota_budgets set tat_ms = case when $2::float8 is null then 0 else extract(epoch from clock_timestamp()) * 1000 + $2::float8 end
       where app_id = $1 returning extract(epoch from clock_timestamp()) * 1000 as t, tat_ms`,
      [appId, tatAheadMs],
    )
    const lockedAt = Number(locked.rows[0]?.t)
    // The slot the holder leaves (read from the row: a second clock_timestamp() can be a few ms later on a busy machine).
    const leftTat = Number(locked.rows[0]?.tat_ms)
    const reservation = store.quota.reserve(appId, 1, 100, 2000)
    await new Promise((r) => setTimeout(r, HOLD_MS))
    const released = await holder.query<{ t: number }>('select extract(epoch from clock_timestamp()) * 1000 as t')
    await holder.query('commit')
    const releasedAt = Number(released.rows[0]?.t)
    expect(releasedAt - lockedAt).toBeGreaterThanOrEqual(HOLD_MS - 50)

    const r = await reservation
    expect(r.slotMs).not.toBeNull()
    // The caller waits slot − now from the answer: both must be read after the lock was released.
    expect(r.nowMs).toBeGreaterThanOrEqual(releasedAt)
    if (tatAheadMs === null) {
      // Idle: the slot is now, when the row was got.
      expect(r.slotMs).toBeGreaterThanOrEqual(releasedAt)
      expect((r.slotMs as number) - r.nowMs).toBeLessThanOrEqual(1)
    } else {
      // Busy: the slot the holder left, and a wait that already counts the time spent queueing.
      expect(r.slotMs).toBeCloseTo(leftTat, 3)
      expect((r.slotMs as number) - r.nowMs).toBeLessThanOrEqual(tatAheadMs - HOLD_MS + 1)
    }
    const row = await sql<{ tat_ms: number }>`select tat_ms from chatferry.quota_budgets where app_id = ${appId}`.execute(inspectLedger(store))
    expect(Number(row.rows[0]?.tat_ms)).toBeCloseTo((r.slotMs as number) + 100, 3)
  } finally {
    await holder.end()
  }
})
