import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { heldByFiles } from './held-by-files.ts'

/**
 * Whether any item of the job is still planned or in flight (a `load` run ends when none is). A
 * message held by a file that failed under `files.onFailure: wait` does not count: it waits for a
 * later run (counted in `status` as waiting on files); one whose files are still being copied does.
 */
export async function findUnfinishedItem(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const r = await sql`select 1 from chatferry.items i where job_id = ${jobId} and status in ('planned', 'sent')
      and not (status = 'planned' and exists (${heldByFiles('failed')})) limit 1`.execute(db)
  return r.rows.length > 0
}
