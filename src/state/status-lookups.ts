/**
 * What `status` reads besides the per-entity counts: the messages still to send per minute of
 * `sentAt` (the retention edge); what `run --delta --final` checks before it starts: the work the
 * load still has (open items and batches); and which of a fleet's jobs have any work at all (a
 * `fleet worker` starts a tenant's loader only then).
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countOpenMessagesPerMinute } from './sql/count-open-messages-per-minute.ts'
import { countOpenWork, type OpenWorkRow } from './sql/count-open-work.ts'
import { selectJobsWithWork } from './sql/select-jobs-with-work.ts'

export type { OpenWorkRow } from './sql/count-open-work.ts'

export interface StatusLookups {
  /** Messages planned or in flight, as `[minute of sentAt (epoch ms ÷ 60 000), count]`, oldest first. */
  openMessagesPerMinute(jobId: string): Promise<[number, number][]>
  /** Items still `planned` or `sent`, and batches still `open`, per entity (none: the load has no work left). */
  openWork(jobId: string): Promise<OpenWorkRow[]>
  /** Of these jobs, those with an item planned or sent, a batch open or an update planned or sent: one statement for all. */
  jobsWithWork(jobIds: readonly string[]): Promise<string[]>
}

export function createStatusLookups(db: Kysely<StateDatabase>): StatusLookups {
  return {
    openMessagesPerMinute: (jobId) => countOpenMessagesPerMinute(db, jobId),
    openWork: (jobId) => countOpenWork(db, jobId),
    jobsWithWork: (jobIds) => selectJobsWithWork(db, jobIds),
  }
}
