/**
 * Faults of the ledger for the lanes' tests: a Postgres trigger that makes the ledger refuse some of
 * a job's writes to one table (a failing statement with the SQLSTATE the test names: a transient one
 * such as 40001 or 57P01, which the lanes ride out, or a permanent one such as P0001, which ends them
 * at once: src/load/ledger-error-kind.ts), and a fault in front of one store operation (its first
 * call fails instead, as over a reset connection).
 */
import { sql } from 'kysely'

import { inspectLedger } from '../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../src/state/store.ts'

/**
 * Makes the ledger refuse the job's updates of `chatferry.<table>` rows that `when` names (SQL over
 * `old` and `new`), `times` times, with `the ledger refused the write (test)` under SQLSTATE
 * `sqlState` (five characters: `40001` serialization_failure, `57P01` admin_shutdown, `P0001`
 * raise_exception …); returns its removal. `jobId` must be a plain identifier (it names the trigger).
 */
export async function refuseLedgerWrites(
  store: LedgerStore,
  table: 'batches' | 'updates',
  jobId: string,
  when: string,
  times: number,
  sqlState: string,
): Promise<() => Promise<void>> {
  if (!/^[0-9A-Z]{5}$/.test(sqlState)) {
    throw new Error(`not a SQLSTATE: ${sqlState}`)
  }
  const db = inspectLedger(store)
  const name = `cf_refuse_${table}_${jobId}`
  await sql.raw(`create sequence ${name}_n`).execute(db)
  await sql
    .raw(
      `create function ${name}() returns trigger language plpgsql as $$ begin
        if nextval('${name}_n') <= ${times} then raise exception 'the ledger refused the write (test)' using errcode = '${sqlState}'; end if;
        return new;
      end $$`,
    )
    .execute(db)
  await sql
    .raw(
      `create trigger ${name} before update on chatferry.${table} for each row when (new.job_id = '${jobId}' and ${when}) execute function ${name}()`,
    )
    .execute(db)
  return async () => {
    await sql.raw(`drop trigger ${name} on chatferry.${table}`).execute(db)
    await sql.raw(`drop function ${name}(); drop sequence ${name}_n`).execute(db)
  }
}

/** Runs `fail` instead of `op` the first time, then `op`: a fault in front of one ledger operation. */
export function failOnce<A extends unknown[], R>(op: (...args: A) => Promise<R>, fail: (...args: A) => Promise<R>): (...args: A) => Promise<R> {
  let failed = false
  return (...args) => {
    if (failed) {
      return op(...args)
    }
    failed = true
    return fail(...args)
  }
}

/** What a reset connection looks like to the caller. */
export const connectionReset = (): Promise<never> => Promise.reject(new Error('Connection terminated unexpectedly (test)'))
