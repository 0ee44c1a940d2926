/**
 * The dry run's "does the ledger hold items of this entity?" (`src/plan/ledger-holds.ts`), on a
 * real Postgres ledger, with the dry run's own session and a clock the test moves: a "none" stands
 * for two seconds (items another process plans meanwhile are not seen), then the ledger is asked
 * again; a "yes" stands; each job and entity has its own answer.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { NONE_KEPT_MS, withCachedHasItems } from '../../../src/plan/ledger-holds.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { users } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'

let db: TestDatabase
let store: LedgerStore
let writer: LedgerStore

beforeAll(async () => {
  db = await createTestDatabase('cf_ledger_holds')
  store = await openLedger({ url: db.url })
  // Another process's planner: its own pool.
  writer = await openLedger({ url: db.url })
  await writer.ensureJob('job-a', 'app')
  await writer.ensureJob('job-b', 'app')
})

afterAll(async () => {
  await store?.close()
  await writer?.close()
  if (db !== undefined) {
    await dropWithin(db)
  }
})

describe('the dry run asks whether the ledger holds items at most every two seconds while it holds none', () => {
  it('keeps a "none" for its time, then sees what was planned meanwhile; keeps a "yes"; one answer per job and entity', async () => {
    let clock = 1_000_000
    await store.dryRun.session(async (raw) => {
      const session = withCachedHasItems(raw, () => clock)
      expect(await session.hasItems?.('job-a', 'users')).toBe(false)
      await writer.planItems('job-a', 'users', users(3))
      // The ledger holds them now; the answer given stands for its time.
      expect(await raw.hasItems?.('job-a', 'users')).toBe(true)
      clock += NONE_KEPT_MS - 1
      expect(await session.hasItems?.('job-a', 'users')).toBe(false)
      clock += 1
      expect(await session.hasItems?.('job-a', 'users')).toBe(true)
      // Other entities and jobs have answers of their own.
      expect(await session.hasItems?.('job-a', 'messages')).toBe(false)
      expect(await session.hasItems?.('job-b', 'users')).toBe(false)
      await writer.planItems('job-b', 'users', users(2))
      clock += NONE_KEPT_MS
      expect(await session.hasItems?.('job-b', 'users')).toBe(true)
      // A "yes" stands, whatever the clock says.
      clock += 10 * NONE_KEPT_MS
      expect(await session.hasItems?.('job-a', 'users')).toBe(true)
    })
  })
})
