/**
 * Where every tenant of a fleet stands, read from the ledger only (no fleet key, no source): the
 * lines `fleet status` prints and the fleet dashboard shows, computed in one place so the two
 * can never disagree. A `running` row whose process died is judged by src/job/run-liveness.ts.
 */
import type { FleetFile } from '../fleet/fleet-file.ts'
import { type DeprovisionedTenant, keylessTenantJobs, statusInput } from '../fleet/fleet-run-tenants.ts'
import { type TenantStatus, tenantStatus } from '../fleet/fleet-status.ts'
import { deadRunReason } from '../job/run-liveness.ts'
import type { LedgerStore } from '../state/store.ts'

export interface FleetStatusReading {
  readonly fleet: string
  readonly tenants: TenantStatus[]
  /** Tenants of the fleet file left out because they were deprovisioned. */
  readonly deprovisioned: DeprovisionedTenant[]
}

/** Every selected tenant's status (`only`: these tenants; empty: the whole fleet file). */
export async function readFleetStatus(fleet: FleetFile, store: LedgerStore, only: readonly string[] = []): Promise<FleetStatusReading> {
  const { jobs, deprovisioned } = await keylessTenantJobs(fleet, store, only)
  const known = new Set((await store.listJobs()).map((j) => j.id))
  const now = Date.now()
  const tenants: TenantStatus[] = []
  for (const job of jobs) {
    tenants.push(await tenantStatus(store, statusInput(job), (run) => deadRunReason(run, now), known))
  }
  return { fleet: fleet.id, tenants, deprovisioned }
}
