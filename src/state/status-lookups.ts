/** What `status` reads besides the per-entity counts: the messages still to send per minute of `sentAt` (the retention edge). */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countOpenMessagesPerMinute } from './sql/count-open-messages-per-minute.ts'

export interface StatusLookups {
  /** Messages planned or in flight, as `[minute of sentAt (epoch ms ÷ 60 000), count]`, oldest first. */
  openMessagesPerMinute(jobId: string): Promise<[number, number][]>
}

export function createStatusLookups(db: Kysely<StateDatabase>): StatusLookups {
  return { openMessagesPerMinute: (jobId) => countOpenMessagesPerMinute(db, jobId) }
}
