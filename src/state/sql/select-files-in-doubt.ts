import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Whether the job has a planned file that was claimed before and whose lease is not held now: a
 * copy that ended without its settlement (a SIGKILL, a lease that ran out, a store outage, a
 * retry's backoff run out) may have put its bytes in the store without the ledger knowing their
 * key. While one exists, the lane asks the store before each upload (the crash-recovery path).
 */
export async function selectFilesInDoubt(db: Kysely<StateDatabase>, jobId: string): Promise<boolean> {
  const r = await sql`
    select 1 from chatferry.files
    where job_id = ${jobId} and state = 'planned' and fence > 0 and (lease_until is null or lease_until <= now())
    limit 1`.execute(db)
  return r.rows.length > 0
}
