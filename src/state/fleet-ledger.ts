/**
 * `store.fleet`: the tenant → app bindings of fleets (`chatferry.fleet_tenants`). A binding holds
 * the app's fullAccess key only sealed (`sealedKey`, opened by src/fleet/key-vault.ts with
 * `CHATFERRY_FLEET_KEY`); this module never sees a key in clear.
 */
import type { Kysely, Selectable } from 'kysely'

import type { FleetTenantsTable, FleetTenantState, StateDatabase } from './schema.ts'
import { insertFleetTenant } from './sql/insert-fleet-tenant.ts'
import { selectFleetTenants } from './sql/select-fleet-tenants.ts'
import { tryFleetLock } from './sql/try-fleet-lock.ts'
import { unlockFleetLock } from './sql/unlock-fleet-lock.ts'
import { type FleetTenantPatch, updateFleetTenant } from './sql/update-fleet-tenant.ts'

/** What provisioning has done to a tenant's app (`steps`). */
export interface ProvisionSteps {
  /** Set before the create call: after a crash, a rerun looks the app up by name instead of creating another. */
  readonly createSent?: boolean
  /** Extension ids enabled. */
  readonly extensions?: readonly string[]
  /** Team member emails added, by role. */
  readonly team?: { readonly admins?: readonly string[]; readonly moderators?: readonly string[] }
  /** Webhook ids configured (version 2), each with its triggers. */
  readonly webhooks?: readonly { readonly id: string; readonly triggers: readonly string[] }[]
}

/** One tenant's binding. */
export interface FleetBinding {
  readonly fleetId: string
  readonly tenantId: string
  /** The tenant's ledger job id. */
  readonly jobId: string
  readonly appName: string
  readonly region: string
  /** Undefined until the app is created (or found again). */
  readonly appId: string | undefined
  readonly state: FleetTenantState
  /** The app's fullAccess key, sealed; open it with the key vault. */
  readonly sealedKey: string | undefined
  /** Which fleet key sealed it (a fingerprint, not the key). */
  readonly keyId: string | undefined
  readonly steps: ProvisionSteps
  readonly lastError: string | undefined
  /** When the platform removes a deleted app for good. */
  readonly scheduledDeleteAt: Date | undefined
  readonly updatedAt: Date
}

export interface FleetLedger {
  binding(fleetId: string, tenantId: string): Promise<FleetBinding | undefined>
  /** Every binding of a fleet, by tenant id. */
  bindings(fleetId: string): Promise<FleetBinding[]>
  /** The tenant's binding, added in state `pending` when it has none. */
  ensure(row: { fleetId: string; tenantId: string; jobId: string; appName: string; region: string }): Promise<FleetBinding>
  /**
   * Changes a binding; with `fromStates`, only when it is in one of them (returns false otherwise).
   */
  update(fleetId: string, tenantId: string, patch: FleetTenantPatch, fromStates?: readonly FleetTenantState[]): Promise<boolean>
  /**
   * Runs `work` while this process alone provisions the fleet (a Postgres advisory lock on a
   * dedicated connection, released when the work ends or the process dies); returns
   * `{ locked: false }` without running it when another process holds the lock.
   */
  exclusive<T>(fleetId: string, work: () => Promise<T>): Promise<{ locked: true; value: T } | { locked: false }>
}

export type { FleetTenantPatch }

function bindingOf(r: Selectable<FleetTenantsTable>): FleetBinding {
  const steps = (typeof r.steps === 'string' ? JSON.parse(r.steps) : (r.steps ?? {})) as ProvisionSteps
  return {
    fleetId: r.fleet_id,
    tenantId: r.tenant_id,
    jobId: r.job_id,
    appName: r.app_name,
    region: r.region,
    appId: r.app_id ?? undefined,
    state: r.state,
    sealedKey: r.sealed_key ?? undefined,
    keyId: r.key_id ?? undefined,
    steps,
    lastError: r.last_error ?? undefined,
    scheduledDeleteAt: r.scheduled_delete_at ?? undefined,
    updatedAt: r.updated_at,
  }
}

export function createFleetLedger(db: Kysely<StateDatabase>): FleetLedger {
  const ledger: FleetLedger = {
    async binding(fleetId, tenantId) {
      const [row] = await selectFleetTenants(db, fleetId, tenantId)
      return row === undefined ? undefined : bindingOf(row)
    },
    async bindings(fleetId) {
      return (await selectFleetTenants(db, fleetId)).map(bindingOf)
    },
    async ensure(row) {
      await insertFleetTenant(db, row)
      const found = await ledger.binding(row.fleetId, row.tenantId)
      if (found === undefined) {
        throw new Error(`the binding of tenant ${row.tenantId} vanished while it was being added`)
      }
      return found
    },
    async update(fleetId, tenantId, patch, fromStates) {
      return (await updateFleetTenant(db, fleetId, tenantId, patch, fromStates)) > 0
    },
    async exclusive(fleetId, work) {
      return db.connection().execute(async (conn) => {
        if (!(await tryFleetLock(conn, fleetId))) {
          return { locked: false as const }
        }
        try {
          return { locked: true as const, value: await work() }
        } finally {
          await unlockFleetLock(conn, fleetId)
        }
      })
    },
  }
  return ledger
}
