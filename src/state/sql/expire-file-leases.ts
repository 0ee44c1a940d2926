import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Ends the file leases of these holders now (they are dead: a process of this host whose PID is
 * gone). The next claim raises each file's fence, so a holder that was not dead after all settles nothing.
 */
export async function expireFileLeases(db: Kysely<StateDatabase>, jobId: string, owners: readonly string[]): Promise<number> {
  const r = await sql`
    update chatferry.files set lease_owner = null, lease_until = null, updated_at = now()
    where job_id = ${jobId} and state = 'planned' and lease_owner = any(${owners}::text[])
    returning id`.execute(db)
  return r.rows.length
}
