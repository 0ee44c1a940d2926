/**
 * A ledger transaction as code outside `src/state` sees it: an opaque handle that can only run SQL
 * text with positional parameters on one session. It exists for one purpose: pg-boss's `db` option
 * (`src/job/schedule-boss.ts`: the embedded store's session, and the advisory lock of pg-boss's set-up).
 */
import { CompiledQuery, type Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'

/**
 * The rows of pg-boss's `db` adapter contract (`executeSql(text, values) → { rows: any[] }`): pg-boss
 * types them `any[]`, and an adapter must match it exactly.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type PgBossRows = any[]

export interface LedgerTransaction {
  executeSql(text: string, values?: readonly unknown[]): Promise<{ rows: PgBossRows }>
}

/** Wraps a kysely transaction (or database) as a {@link LedgerTransaction}. */
export function ledgerTransaction(trx: Kysely<StateDatabase>): LedgerTransaction {
  return {
    async executeSql(text, values = []) {
      const r = await trx.executeQuery(CompiledQuery.raw(text, [...values]))
      return { rows: r.rows as PgBossRows }
    },
  }
}
