import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Ends the leases of these updates now (their holder is dead). A `sent` one keeps its status: its
 * call may have reached the platform, and the next holder checks before sending again.
 */
export async function expireUpdateLeases(db: Kysely<StateDatabase>, ids: readonly number[]): Promise<void> {
  await sql`
    update chatferry.updates set lease_owner = null, lease_expires_at = now()
    where id = any(${ids}::bigint[]) and status in ('planned', 'sent')`.execute(db)
}
