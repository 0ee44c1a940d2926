/**
 * Raw sessions on the ledger's database for the one library that keeps its own tables there and
 * brings its own SQL: pg-boss, for the jobs' schedules (`src/job/schedule-boss.ts`). Nothing else outside `src/state` should
 * need this; the ledger's own tables are reached through `store.batches`, `store.quota`, ….
 */
import type { OpenedDatabase } from '../db.ts'
import { type LedgerTransaction, ledgerTransaction, type PgBossRows } from './ledger-transaction.ts'
import type { StateDatabase } from './schema.ts'

export interface LedgerSessions {
  /**
   * The embedded store's database, outside any transaction: SQL with values runs as one query, SQL
   * without values as a script (several statements, as pg-boss's migrations and maintenance are),
   * which answers the rows of all its statements in order.
   * Undefined on a server, where such a library connects by URL with its own pool.
   */
  readonly embedded: LedgerTransaction | undefined
  /** Runs `fn` on one connection held for its duration (session-level advisory locks need that). */
  withSession<T>(fn: (session: LedgerTransaction) => Promise<T>): Promise<T>
}

export function createLedgerSessions(database: OpenedDatabase<StateDatabase>): LedgerSessions {
  const pglite = database.pglite
  const embedded: LedgerTransaction | undefined =
    pglite === undefined
      ? undefined
      : {
          async executeSql(text, values) {
            if (values === undefined || values.length === 0) {
              // pg-boss 12's contract (and its own PGlite adapter): the rows of every statement,
              // in order; it finds a lock's row ahead of a claim's in one script.
              const results = await pglite.exec(text)
              return { rows: results.flatMap((r) => r.rows) as PgBossRows }
            }
            const r = await pglite.query(text, [...values])
            return { rows: r.rows as PgBossRows }
          },
        }
  return {
    embedded,
    withSession: (fn) => database.db.connection().execute((conn) => fn(ledgerTransaction(conn))),
  }
}
