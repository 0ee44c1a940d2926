import type { Kysely, Selectable } from 'kysely'

import type { FleetTenantsTable, StateDatabase } from '../schema.ts'

/** Reads a fleet's rows of `chatferry.fleet_tenants` (one tenant's, when named), by tenant id. */
export async function selectFleetTenants(db: Kysely<StateDatabase>, fleetId: string, tenantId?: string): Promise<Selectable<FleetTenantsTable>[]> {
  let q = db.selectFrom('chatferry.fleet_tenants').selectAll().where('fleet_id', '=', fleetId)
  if (tenantId !== undefined) {
    q = q.where('tenant_id', '=', tenantId)
  }
  return q.orderBy('tenant_id').execute()
}
