import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The holders of the job's unexpired file leases (`host/pid`), for taking over those of dead processes. */
export async function selectFileLeaseOwners(db: Kysely<StateDatabase>, jobId: string): Promise<string[]> {
  const r = await sql<{ lease_owner: string }>`
    select distinct lease_owner from chatferry.files
    where job_id = ${jobId} and state = 'planned' and lease_owner is not null and lease_until > now()`.execute(db)
  return r.rows.map((row) => row.lease_owner)
}
