import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Takes the session-level advisory lock of a fleet's provisioning on this connection, or returns
 * false when another session holds it. Released by {@link import('./unlock-fleet-lock.ts')} or when
 * the connection closes (a killed process never leaves it held).
 */
export async function tryFleetLock(db: Kysely<StateDatabase>, fleetId: string): Promise<boolean> {
  const r = await sql<{ ok: boolean }>`select pg_try_advisory_lock(hashtext(${`chatferry.fleet:${fleetId}`})) as ok`.execute(db)
  return r.rows[0]?.ok === true
}
