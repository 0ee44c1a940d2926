/**
 * The tenants a fleet command runs, as jobs: each tenant of the fleet file (or those named with
 * `--tenant`) with its binding (src/state/fleet-ledger.ts), its key opened (tenant-app.ts) and its
 * job configuration (fleet-file.ts `tenantJobConfig`: defaults ⊕ tenant, validated like
 * chatferry.yaml). A tenant that cannot run — not provisioned, its app deleted, its stored key not
 * opening with this fleet key, a configuration problem — is not dropped: it comes back with its
 * reason, and `fleet run` counts it failed (a fix is needed) while the others go on. A tenant
 * whose app was deprovisioned is left out, unless named with `--tenant`, and named once in
 * {@link deprovisionedNote} with what to remove from the fleet file.
 */
import { ConfigError } from '../errors.ts'
import { type LoadConfig, resolveLoadConfig } from '../load/config.ts'
import type { FleetBinding } from '../state/index.ts'
import type { LedgerStore } from '../state/store.ts'
import { type FleetFile, tenantJobConfig } from './fleet-file.ts'
import type { FleetTenantJob } from './fleet-run.ts'
import { reasonOf } from './fleet-run-outcome.ts'
import type { TenantStatusInput } from './fleet-status.ts'
import { type KeyVault, VaultError } from './key-vault.ts'
import { boundAppOf, unboundReason } from './tenant-app.ts'

export interface UnusableTenant {
  readonly tenantId: string
  readonly jobId: string
  readonly reason: string
  /** The tenant's stored key did not open with this fleet key. */
  readonly keyRefused: boolean
}

export interface FleetTenantJobs {
  readonly jobs: FleetTenantJob[]
  readonly unusable: UnusableTenant[]
  /** Tenants whose app was deprovisioned and that were not named with `--tenant`: left out. */
  readonly deprovisioned: DeprovisionedTenant[]
}

/** A tenant `fleet deprovision` deleted the app of: left out of every fleet command but by name. */
export interface DeprovisionedTenant {
  readonly tenantId: string
  /** Its index in the fleet file's `tenants:`. */
  readonly index: number
  readonly appId: string | undefined
}

/** The tenants left out because their app was deprovisioned (those named in `only` are not). */
function leftOut(fleet: FleetFile, bindings: ReadonlyMap<string, FleetBinding>, only: readonly string[]): DeprovisionedTenant[] {
  return fleet.tenants
    .filter((t) => !only.includes(t.id) && bindings.get(t.id)?.state === 'deleted')
    .map((t) => ({ tenantId: t.id, index: t.index, appId: bindings.get(t.id)?.appId }))
}

/**
 * The one line every fleet command prints about the tenants it left out: what to remove from the
 * fleet file, exactly; undefined when none.
 */
export function deprovisionedNote(fleet: FleetFile, left: readonly DeprovisionedTenant[]): string | undefined {
  if (left.length === 0) {
    return undefined
  }
  const which = left.map((d) => `tenants[${d.index}] (id ${d.tenantId}, app ${d.appId ?? '?'})`).join(', ')
  return `left out, deprovisioned (their apps deleted): ${which}; remove ${left.length === 1 ? 'it' : 'them'} from ${fleet.file}`
}

/** The fleet's tenants (all, or `only`); an unknown id in `only` is a {@link ConfigError}, before anything runs. */
export function selectTenants(fleet: FleetFile, only: readonly string[] = []): FleetFile['tenants'] {
  const unknown = only.filter((id) => !fleet.tenants.some((t) => t.id === id))
  if (unknown.length > 0) {
    throw new ConfigError(fleet.file, [
      { path: 'tenants', message: `no tenant ${unknown.join(', ')} in the fleet (--tenant): it has ${fleet.tenants.map((t) => t.id).join(', ')}` },
    ])
  }
  return only.length === 0 ? fleet.tenants : fleet.tenants.filter((t) => only.includes(t.id))
}

/** Every selected tenant as a job with its key opened, or with why it cannot run. */
export async function fleetTenantJobs(
  fleet: FleetFile,
  store: LedgerStore,
  vault: KeyVault,
  options: { only?: readonly string[]; loadFlags?: Partial<Record<keyof LoadConfig, number>>; env?: NodeJS.ProcessEnv } = {},
): Promise<FleetTenantJobs> {
  const env = options.env ?? process.env
  const bindings = new Map((await store.fleet.bindings(fleet.id)).map((b) => [b.tenantId, b]))
  const jobs: FleetTenantJob[] = []
  const unusable: UnusableTenant[] = []
  const deprovisioned = leftOut(fleet, bindings, options.only ?? [])
  for (const t of selectTenants(fleet, options.only)) {
    if (deprovisioned.some((d) => d.tenantId === t.id)) {
      continue
    }
    try {
      const config = tenantJobConfig(fleet, t.id, boundAppOf(bindings.get(t.id), vault), env)
      jobs.push({ tenantId: t.id, jobId: t.jobId, config, load: resolveLoadConfig(config.load ?? {}, options.loadFlags ?? {}, env, config.file) })
    } catch (err) {
      unusable.push({ tenantId: t.id, jobId: t.jobId, reason: reasonOf(err), keyRefused: err instanceof VaultError })
    }
  }
  return { jobs, unusable, deprovisioned }
}

/** The placeholder key of a job configuration that sends nothing (`fleet status`, `fleet plan`): no request carries it. */
const NO_KEY = 'chatferry-fleet-reads-no-key'

/** A tenant as a job for commands that send nothing to its app (no key opened), with why it is not bound yet. */
export interface KeylessTenantJob extends FleetTenantJob {
  readonly unbound: string | undefined
}

/** Every selected tenant as a job whose target key is a placeholder: for `fleet status` and `fleet plan`. */
export async function keylessTenantJobs(
  fleet: FleetFile,
  store: LedgerStore,
  only: readonly string[] = [],
  env: NodeJS.ProcessEnv = process.env,
): Promise<{ jobs: KeylessTenantJob[]; deprovisioned: DeprovisionedTenant[] }> {
  const bindings = new Map((await store.fleet.bindings(fleet.id)).map((b) => [b.tenantId, b]))
  const deprovisioned = leftOut(fleet, bindings, only)
  const jobs = selectTenants(fleet, only)
    .filter((t) => !deprovisioned.some((d) => d.tenantId === t.id))
    .map((t) => {
      const b = bindings.get(t.id)
      const config = tenantJobConfig(fleet, t.id, { appId: b?.appId ?? `${t.id}-unbound`, region: t.region, apiKey: NO_KEY }, env)
      return { tenantId: t.id, jobId: t.jobId, config, load: resolveLoadConfig(config.load ?? {}, {}, env, config.file), unbound: unboundReason(b) }
    })
  return { jobs, deprovisioned }
}

/** What `fleet status` needs of each tenant: its job, app and quota. */
export function statusInput(t: KeylessTenantJob): TenantStatusInput {
  const { quota } = t.config.target
  return {
    tenantId: t.tenantId,
    jobId: t.jobId,
    appId: t.config.target.appId,
    quota: { requestsPerMinute: quota.requestsPerMinute, itemsPerRequest: quota.itemsPerRequest },
    ...(t.unbound !== undefined ? { unbound: t.unbound } : {}),
  }
}
