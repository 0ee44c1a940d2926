import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Whether the job has an update still to apply: planned, or sent and not settled. */
export async function findOpenUpdate(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const r = await sql`
    select 1 from chatferry.updates where job_id = ${jobId} and status in ('planned', 'sent') limit 1`.execute(db)
  return r.rows.length > 0
}
