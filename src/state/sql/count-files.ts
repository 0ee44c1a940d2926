import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The files of a job by state, and the messages still held by their files. */
export interface FileCountRow {
  readonly planned: number
  readonly copied: number
  readonly failed: number
  readonly skipped: number
  /** Bytes copied (the store's), and expected of those not copied yet (when the source said). */
  readonly copiedBytes: number
  readonly plannedBytes: number
  /** Failed files whose messages wait (`files.onFailure: wait`). */
  readonly failedWaiting: number
  /** Planned messages held by a file not settled, or failed under `wait`. */
  readonly waitingMessages: number
}

/** Counts a job's files by state (one statement), for `status`, progress and the reports. */
export async function countFiles(db: Kysely<StateDatabase>, jobId: string): Promise<FileCountRow> {
  const r = await sql<Record<keyof FileCountRow, string | number | null>>`
    select
      count(*) filter (where state = 'planned') as planned,
      count(*) filter (where state = 'copied') as copied,
      count(*) filter (where state = 'failed') as failed,
      count(*) filter (where state = 'skipped') as skipped,
      coalesce(sum(bytes) filter (where state = 'copied'), 0) as "copiedBytes",
      coalesce(sum(expected_size) filter (where state = 'planned'), 0) as "plannedBytes",
      count(*) filter (where state = 'failed' and on_failure = 'wait') as "failedWaiting",
      (select count(*) from chatferry.items i
        where i.job_id = ${jobId} and i.entity = 'messages' and i.status = 'planned' and exists (
          select 1 from chatferry.file_links l join chatferry.files w on w.id = l.file_id
          where l.job_id = i.job_id and l.target_key = i.target_key
            and (w.state = 'planned' or (w.state = 'failed' and w.on_failure = 'wait')))) as "waitingMessages"
    from chatferry.files where job_id = ${jobId}`.execute(db)
  const row = r.rows[0]
  const n = (v: string | number | null | undefined) => Number(v ?? 0)
  return {
    planned: n(row?.planned),
    copied: n(row?.copied),
    failed: n(row?.failed),
    skipped: n(row?.skipped),
    copiedBytes: n(row?.copiedBytes),
    plannedBytes: n(row?.plannedBytes),
    failedWaiting: n(row?.failedWaiting),
    waitingMessages: n(row?.waitingMessages),
  }
}
