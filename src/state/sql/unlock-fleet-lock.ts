import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Releases the advisory lock {@link import('./try-fleet-lock.ts')} took on this connection. */
export async function unlockFleetLock(db: Kysely<StateDatabase>, fleetId: string): Promise<void> {
  await sql`select pg_advisory_unlock(hashtext(${`chatferry.fleet:${fleetId}`}))`.execute(db)
}
