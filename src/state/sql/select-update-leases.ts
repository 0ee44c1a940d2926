import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Updates of the job under an unexpired lease, with their holder (to find the dead holders on this host). */
export async function selectUpdateLeases(db: Kysely<StateDatabase>, jobId: string): Promise<{ id: number; leaseOwner: string }[]> {
  const r = await sql<{ id: number | string; lease_owner: string }>`
    select id, lease_owner from chatferry.updates
    where job_id = ${jobId} and status in ('planned', 'sent') and lease_owner is not null and lease_expires_at > now()`.execute(db)
  return r.rows.map((row) => ({ id: Number(row.id), leaseOwner: row.lease_owner }))
}
