import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { UnitKind } from '../unit-kind.ts'

/**
 * Ends the leases of these open units of `kind` now (their holder is dead): they are claimable at
 * once. The dead holder could not record anything anyway: the next claim fences it out (a new
 * token, or another owner). A unit's status is kept (an update `sent` stays `sent`: its call may
 * have reached the platform, and the next holder checks first).
 */
export async function expireUnits(db: Kysely<StateDatabase>, kind: UnitKind, ids: readonly number[]): Promise<void> {
  await sql`
    update ${sql.id('chatferry', kind.table)} set lease_owner = null, lease_expires_at = now()
    where id = any(${ids}::bigint[]) and status = any(${kind.open}::text[])`.execute(db)
}
