import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { UnitKind } from '../unit-kind.ts'

/**
 * Renews the leases of units of `kind` still held under these fences (token or owner, see
 * `../lease-units.ts`): `leaseSeconds` from now, only where the fence matches, the unit is open and
 * the lease has not expired (a lapsed lease is not revived: another holder may have it). Returns
 * the ids renewed.
 */
export async function renewUnits(
  db: Kysely<StateDatabase>,
  kind: UnitKind,
  units: readonly { id: number; fence: string }[],
  leaseSeconds: number,
): Promise<number[]> {
  const table = sql.id('chatferry', kind.table)
  const held = kind.fence === 'token' ? sql`u.lease_token = v.fence::uuid` : sql`u.lease_owner = v.fence`
  const r = await sql<{ id: number | string }>`
    update ${table} u
    set lease_expires_at = now() + ${leaseSeconds} * interval '1 second'
    from unnest(${units.map((x) => x.id)}::bigint[], ${units.map((x) => x.fence)}::text[]) as v(id, fence)
    where u.id = v.id and ${held} and u.status = any(${kind.open}::text[]) and u.lease_expires_at > now()
    returning u.id`.execute(db)
  return r.rows.map((row) => Number(row.id))
}
