import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The ids of the job's open batches (unlocked: candidates the orphan repair checks against the work queue). */
export async function selectOpenBatches(db: Kysely<StateDatabase>, jobId: string): Promise<number[]> {
  const r = await sql<{ id: number }>`select id from chatferry.batches where job_id = ${jobId} and status = 'open'`.execute(db)
  return r.rows.map((x) => Number(x.id))
}
