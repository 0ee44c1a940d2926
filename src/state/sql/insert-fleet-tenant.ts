import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Adds a tenant's row to `chatferry.fleet_tenants` in state `pending`, unless the tenant already
 * has one (kept as it is: its app, key and state are the record of what was done).
 */
export async function insertFleetTenant(
  db: Kysely<StateDatabase>,
  row: { fleetId: string; tenantId: string; jobId: string; appName: string; region: string },
): Promise<void> {
  await db
    .insertInto('chatferry.fleet_tenants')
    .values({ fleet_id: row.fleetId, tenant_id: row.tenantId, job_id: row.jobId, app_name: row.appName, region: row.region, state: 'pending' })
    .onConflict((oc) => oc.columns(['fleet_id', 'tenant_id']).doNothing())
    .execute()
}
