import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The job's open batches under an unexpired lease, with their holder (`host/pid/…`): the candidates for a takeover. */
export async function selectLeasedBatches(db: Kysely<StateDatabase>, jobId: string): Promise<{ id: number; leaseOwner: string }[]> {
  const held = await sql<{ id: number; lease_owner: string }>`
    select id, lease_owner from chatferry.batches
    where job_id = ${jobId} and status = 'open' and lease_owner is not null and lease_expires_at > now()`.execute(db)
  return held.rows.map((b) => ({ id: Number(b.id), leaseOwner: b.lease_owner }))
}
