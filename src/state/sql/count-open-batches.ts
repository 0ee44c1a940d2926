import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Counts the job's open batches (packed, not settled yet): how far the packer is ahead of the senders. */
export async function countOpenBatches(db: Kysely<StateDatabase>, jobId: string): Promise<number> {
  const open = await sql<{ n: number }>`
    select count(*)::int as n from chatferry.batches where job_id = ${jobId} and status = 'open'`.execute(db)
  return open.rows[0]?.n ?? 0
}
