import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Counts a job's items per entity that are not loaded (`planned`, `sent` or `rejected` in
 * `chatferry.items`): what verify reports as still open in the ledger.
 */
export async function countOpenItems(db: Kysely<StateDatabase>, jobId: string): Promise<{ entity: string; n: number }[]> {
  const open = await sql<{ entity: string; n: number }>`
    select entity, count(*)::int as n from chatferry.items
    where job_id = ${jobId} and status in ('planned', 'sent', 'rejected') group by 1`.execute(db)
  return open.rows
}
