import type { Kysely } from 'kysely'

import type { FleetTenantState, StateDatabase } from '../schema.ts'

/** The columns of a tenant's row that provisioning changes. */
export interface FleetTenantPatch {
  readonly appName?: string
  readonly region?: string
  readonly appId?: string | null
  readonly state?: FleetTenantState
  readonly sealedKey?: string | null
  readonly keyId?: string | null
  /** Replaces the whole `steps` document. */
  readonly steps?: unknown
  readonly lastError?: string | null
  readonly scheduledDeleteAt?: Date | null
}

/**
 * Changes a tenant's row of `chatferry.fleet_tenants` (only when its state is one of `fromStates`,
 * when given: a state change is a compare-and-set). Returns the rows changed, 0 or 1.
 */
export async function updateFleetTenant(
  db: Kysely<StateDatabase>,
  fleetId: string,
  tenantId: string,
  patch: FleetTenantPatch,
  fromStates?: readonly FleetTenantState[],
): Promise<number> {
  let q = db
    .updateTable('chatferry.fleet_tenants')
    .set({
      ...(patch.appName !== undefined ? { app_name: patch.appName } : {}),
      ...(patch.region !== undefined ? { region: patch.region } : {}),
      ...(patch.appId !== undefined ? { app_id: patch.appId } : {}),
      ...(patch.state !== undefined ? { state: patch.state } : {}),
      ...(patch.sealedKey !== undefined ? { sealed_key: patch.sealedKey } : {}),
      ...(patch.keyId !== undefined ? { key_id: patch.keyId } : {}),
      ...(patch.steps !== undefined ? { steps: JSON.stringify(patch.steps) } : {}),
      ...(patch.lastError !== undefined ? { last_error: patch.lastError } : {}),
      ...(patch.scheduledDeleteAt !== undefined ? { scheduled_delete_at: patch.scheduledDeleteAt } : {}),
      updated_at: new Date(),
    })
    .where('fleet_id', '=', fleetId)
    .where('tenant_id', '=', tenantId)
  if (fromStates !== undefined) {
    q = q.where('state', 'in', [...fromStates])
  }
  const r = await q.executeTakeFirst()
  return Number(r.numUpdatedRows)
}
