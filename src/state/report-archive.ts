/**
 * The reports kept in the ledger (`chatferry.reports`, one row per plan or verify run), so each
 * plan can be compared with the previous plan of the same job.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { insertReport } from './sql/insert-report.ts'
import { selectLatestReport } from './sql/select-latest-report.ts'

export type ReportKind = 'plan' | 'verify'

export interface ReportArchive {
  /** Keeps a report (one row per run); the report must name its job and run. */
  save(kind: ReportKind, report: { jobId: string; runId: string }): Promise<void>
  /** The latest report of a kind for a job, parsed from its JSON, if any. */
  latest<T>(jobId: string, kind: ReportKind): Promise<T | undefined>
}

export function createReportArchive(db: Kysely<StateDatabase>): ReportArchive {
  return {
    save: (kind, report) => insertReport(db, kind, report),
    async latest<T>(jobId: string, kind: ReportKind) {
      const raw = await selectLatestReport(db, jobId, kind)
      if (raw === undefined) {
        return undefined
      }
      return (typeof raw === 'string' ? JSON.parse(raw) : raw) as T
    },
  }
}
