import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Whether the job holds any item at all (one index probe, where counting them scans every one). */
export async function jobHasItems(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const r = await sql<{ x: number }>`select 1 as x from chatferry.items where job_id = ${jobId} limit 1`.execute(db)
  return r.rows.length > 0
}
