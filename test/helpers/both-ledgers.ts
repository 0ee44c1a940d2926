/**
 * One ledger on Postgres (a fresh test database) and one embedded (PGlite in memory), opened before
 * a file's tests and closed after them, for tests that run the same cases on both
 * (`describe.each(ledgers.stores)('… on $name', …)`).
 */
import { afterAll, beforeAll } from 'vitest'

import { type LedgerStore, openLedger } from '../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { dropWithin } from './loader-harness.ts'

export interface BothLedgers {
  /** `store` is set once the file's `beforeAll` has run. */
  readonly stores: { name: 'postgres' | 'pglite'; store?: LedgerStore }[]
  /** The Postgres test database (after `beforeAll`). */
  db(): TestDatabase
}

export function useBothLedgers(databaseName: string): BothLedgers {
  let tdb: TestDatabase | undefined
  const stores: BothLedgers['stores'] = [{ name: 'postgres' }, { name: 'pglite' }]
  beforeAll(async () => {
    tdb = await createTestDatabase(databaseName)
    stores[0]!.store = await openLedger({ url: tdb.url })
    stores[1]!.store = await openLedger({ dir: 'memory://' })
  })
  afterAll(async () => {
    for (const s of stores) {
      await s.store?.close()
    }
    if (tdb !== undefined) {
      await dropWithin(tdb)
    }
  })
  return {
    stores,
    db: () => {
      if (tdb === undefined) {
        throw new Error('the test database exists only once beforeAll has run')
      }
      return tdb
    },
  }
}
