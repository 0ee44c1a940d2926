import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Counts a job's messages still to send (`planned` or `sent` in `chatferry.items`) per minute of
 * their `sentAt` (the `sort_key`, UNIX seconds), oldest first: what `status` needs to estimate which
 * of them will have aged out of the platform's retention window by the time the load reaches them.
 */
export async function countOpenMessagesPerMinute(db: Kysely<StateDatabase>, jobId: string): Promise<[number, number][]> {
  const rows = await sql<{ minute: string; n: number }>`
    select floor(sort_key / 60)::bigint as minute, count(*)::int as n from chatferry.items
    where job_id = ${jobId} and entity = 'messages' and status in ('planned', 'sent')
    group by 1 order by 1`.execute(db)
  return rows.rows.map((r) => [Number(r.minute), r.n])
}
