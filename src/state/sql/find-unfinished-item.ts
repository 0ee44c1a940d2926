import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Whether any item of the job is still planned or in flight (a `load` run ends when none is). */
export async function findUnfinishedItem(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const r = await sql`select 1 from chatferry.items where job_id = ${jobId} and status in ('planned', 'sent') limit 1`.execute(db)
  return r.rows.length > 0
}
