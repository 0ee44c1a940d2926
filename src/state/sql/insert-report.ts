import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Writes one row of `chatferry.reports`: a plan or verify report of a run, kept as `jsonb` so the
 * next plan of the job can diff against it.
 */
export async function insertReport(db: Kysely<StateDatabase>, kind: string, report: { jobId: string; runId: string }): Promise<void> {
  await sql`insert into chatferry.reports (job_id, kind, run_id, report) values (${report.jobId}, ${kind}, ${report.runId}, ${JSON.stringify(report)}::jsonb)`.execute(
    db,
  )
}
