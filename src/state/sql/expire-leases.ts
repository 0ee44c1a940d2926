import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Ends the leases of these batches now (a dead holder's). The dead holder could not settle anyway:
 * the next claim bumps the token, and its old token no longer matches.
 */
export async function expireLeases(db: Kysely<StateDatabase>, batchIds: readonly number[]): Promise<void> {
  await sql`update chatferry.batches set lease_expires_at = now(), lease_owner = null where id = any(${batchIds}::bigint[])`.execute(db)
}
