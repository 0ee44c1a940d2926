import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Locks those of these batches that are still open, for the rest of the transaction, skipping the
 * ones another transaction holds (a claim or settle in progress: that batch is alive, leave it).
 */
export async function lockOpenBatches(db: Kysely<StateDatabase>, batchIds: readonly number[]): Promise<number[]> {
  const r = await sql<{ id: number }>`
    select id from chatferry.batches where id = any(${batchIds}::bigint[]) and status = 'open'
    for update skip locked`.execute(db)
  return r.rows.map((x) => Number(x.id))
}
