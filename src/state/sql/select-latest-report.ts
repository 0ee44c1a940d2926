import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Reads the newest `chatferry.reports` row of a job and kind (highest id): the previous plan a new
 * plan is compared with. Returns the stored report as the driver hands it (an object, or its JSON
 * text), or undefined when the job has none.
 */
export async function selectLatestReport(db: Kysely<StateDatabase>, jobId: string, kind: string): Promise<unknown> {
  const r = await sql<{ report: unknown }>`
    select report from chatferry.reports where job_id = ${jobId} and kind = ${kind} order by id desc limit 1`.execute(db)
  return r.rows[0]?.report
}
