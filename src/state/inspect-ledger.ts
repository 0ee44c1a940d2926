/**
 * The ledger's database handle, for tests only. Production code reaches the ledger through
 * {@link LedgerStore}'s operations, whose SQL lives in `src/state/sql/` (issue 11): the store does
 * not hand out its handle. Tests check what a ledger holds with SQL of their own (a crash test
 * counts items, a mutant installs a trigger), so they ask for it here;
 * `test/unit/repo/state-sql-owner.test.ts` fails when anything in `src/`, `connectors/` or `mappings/`
 * outside `src/state` imports this module.
 * @internal
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'

/** A store's database, by the store (a `LedgerStore`, kept as an object here: store.ts imports this file). */
const DATABASES = new WeakMap<object, Kysely<StateDatabase>>()

/** Called once by `createLedgerStore`. @internal */
export function registerLedgerDatabase(store: object, db: Kysely<StateDatabase>): void {
  DATABASES.set(store, db)
}

/** The database of `store`, for a test's own SQL. @internal */
export function inspectLedger(store: object): Kysely<StateDatabase> {
  const db = DATABASES.get(store)
  if (db === undefined) {
    throw new Error('inspectLedger: not a ledger opened by createLedgerStore')
  }
  return db
}
