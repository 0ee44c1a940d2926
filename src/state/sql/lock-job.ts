import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Locks the job row for the rest of the transaction, or returns false when another transaction
 * holds it (SKIP LOCKED). Packing takes it so that one packer per job runs at a time across
 * processes; the others skip instead of waiting, since the one that holds it packs for them.
 */
export async function lockJob(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const lock = await sql`select id from chatferry.jobs where id = ${jobId} for update skip locked`.execute(db)
  return lock.rows.length > 0
}
