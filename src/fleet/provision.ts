/**
 * `chatferry fleet provision`: every tenant of the fleet file gets its app through the management
 * interface — created once (found again by name after a crash), its key sealed in the ledger, its
 * extensions enabled, its team members added and its webhooks configured. Idempotent: a rerun sends
 * only what the bindings say is missing. One process provisions a fleet at a time (an advisory lock
 * in the ledger). Wrong management credentials stop everything at the first call; a tenant the
 * platform refuses is marked failed with its reason and the others go on.
 */
import { ChatferryError, ConfigError } from '../errors.ts'
import type { FleetBinding, LedgerStore } from '../state/index.ts'
import type { ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { FleetFile, FleetTenant } from './fleet-file.ts'
import { FLEET_KEY_ENV, type KeyVault } from './key-vault.ts'
import { ensureTenantApp, TenantProblem } from './provision-app.ts'
import { type SetupCounts, setUpTenantApp } from './provision-setup.ts'

/** What provisioning did for one tenant: its binding as it now stands, and this run's doing. */
export interface TenantOutcome extends Pick<FleetBinding, 'tenantId' | 'jobId' | 'appName' | 'region' | 'appId' | 'state'> {
  /** How the app was bound this time; undefined when provisioning did not get that far. */
  readonly app: 'created' | 'found again' | 'kept' | undefined
  readonly setup: SetupCounts | undefined
  /** Why the tenant is not provisioned. */
  readonly error: string | undefined
  /** True when running again cannot help (a refusal, a name taken, …): the fleet file or the account needs a fix. */
  readonly needsFix: boolean
  /** Said about a tenant left alone (deprovisioned). */
  readonly note: string | undefined
}

export interface ProvisionOptions {
  readonly fleet: FleetFile
  readonly store: LedgerStore
  readonly mgmt: ManagementClient
  readonly vault: KeyVault
  /** Only these tenants (ids); all when absent. */
  readonly tenants?: readonly string[]
  /** Called after each tenant, for progress. */
  readonly onTenant?: (outcome: TenantOutcome) => void
}

/** True for an answer that says the management key or secret is wrong (or missing). */
export function isCredentialsRefusal(err: unknown): err is PlatformError {
  return err instanceof PlatformError && err.kind === 'http' && (err.status === 401 || err.status === 403) && /^AUTH_/.test(err.code)
}

function credentialsError(fleet: FleetFile, err: PlatformError): ConfigError {
  return new ConfigError(fleet.file, [
    {
      path: 'management',
      message: `the management interface at ${fleet.management?.url ?? '?'} refused the key and secret (${err.code}, HTTP ${err.status}): fix management.key and management.secret; nothing was provisioned`,
    },
  ])
}

/** The tenants a command works on: all, or the named ones (an unknown name is a usage error). */
export function selectTenants(fleet: FleetFile, ids: readonly string[] | undefined): FleetTenant[] {
  if (ids === undefined || ids.length === 0) {
    return [...fleet.tenants]
  }
  const unknown = ids.filter((id) => !fleet.tenants.some((t) => t.id === id))
  if (unknown.length > 0) {
    throw new ConfigError(fleet.file, [
      { path: 'tenants', message: `no tenant ${unknown.join(', ')} in the fleet file (have ${fleet.tenants.map((t) => t.id).join(', ')})` },
    ])
  }
  return fleet.tenants.filter((t) => ids.includes(t.id))
}

/** Refuses a fleet key other than the one that sealed the stored keys: mixing two would lose keys. */
export function refuseOtherFleetKey(fleet: FleetFile, bindings: readonly FleetBinding[], vault: KeyVault): void {
  const other = bindings.filter((b) => b.sealedKey !== undefined && b.keyId !== vault.keyId)
  if (other.length > 0) {
    throw new ConfigError('environment', [
      {
        path: FLEET_KEY_ENV,
        message: `is not the key that sealed the stored app keys of fleet ${fleet.id} (key id ${other[0]?.keyId ?? '?'}, this one ${vault.keyId}; tenants ${other.map((b) => b.tenantId).join(', ')}): set the fleet's key`,
      },
    ])
  }
}

function outcomeOf(t: FleetTenant, b: FleetBinding | undefined, extra: Partial<TenantOutcome>): TenantOutcome {
  return {
    tenantId: t.id,
    jobId: t.jobId,
    appName: b?.appName ?? t.appName,
    region: b?.region ?? t.region,
    appId: b?.appId,
    state: b?.state ?? 'pending',
    app: undefined,
    setup: undefined,
    error: undefined,
    needsFix: false,
    note: undefined,
    ...extra,
  }
}

async function provisionTenant(o: ProvisionOptions, t: FleetTenant): Promise<TenantOutcome> {
  const ledger = o.store.fleet
  const binding = await ledger.ensure({ fleetId: o.fleet.id, tenantId: t.id, jobId: t.jobId, appName: t.appName, region: t.region })
  if (binding.state === 'deleted') {
    const note = `deprovisioned: its app ${binding.appId ?? ''} was deleted${binding.scheduledDeleteAt ? ` (removed for good at ${binding.scheduledDeleteAt.toISOString()})` : ''}; left alone (a tenant gets one app: give a new app a new tenant id)`
    return outcomeOf(t, binding, { note })
  }
  let app: TenantOutcome['app']
  try {
    const bound = await ensureTenantApp(ledger, o.mgmt, o.vault, t, binding)
    app = bound.how
    const setup = await setUpTenantApp(ledger, o.mgmt, t, bound.binding)
    return outcomeOf(t, await ledger.binding(o.fleet.id, t.id), { app, setup })
  } catch (err) {
    if (isCredentialsRefusal(err)) {
      throw err
    }
    if (!(err instanceof TenantProblem) && !(err instanceof PlatformError)) {
      throw err
    }
    await ledger.update(o.fleet.id, t.id, { state: 'failed', lastError: err.message })
    const needsFix = err instanceof TenantProblem || !err.retryable
    return outcomeOf(t, await ledger.binding(o.fleet.id, t.id), { app, error: err.message, needsFix })
  }
}

/**
 * Provisions the fleet's tenants (all, or `tenants`), one after another; returns what happened to
 * each. Throws {@link ConfigError} (exit 2) for wrong management credentials or another fleet key,
 * `CHECKPOINT_CONFLICT` when another process is provisioning the same fleet.
 */
export async function provisionFleet(o: ProvisionOptions): Promise<TenantOutcome[]> {
  const tenants = selectTenants(o.fleet, o.tenants)
  refuseOtherFleetKey(o.fleet, await o.store.fleet.bindings(o.fleet.id), o.vault)
  try {
    // The first call: wrong credentials stop here, before anything is created.
    await o.mgmt.listApps({ perPage: 1 })
  } catch (err) {
    throw isCredentialsRefusal(err) ? credentialsError(o.fleet, err) : err
  }
  const run = await o.store.fleet.exclusive(o.fleet.id, async () => {
    const outcomes: TenantOutcome[] = []
    for (const t of tenants) {
      let outcome: TenantOutcome
      try {
        outcome = await provisionTenant(o, t)
      } catch (err) {
        throw isCredentialsRefusal(err) ? credentialsError(o.fleet, err) : err
      }
      outcomes.push(outcome)
      o.onTenant?.(outcome)
    }
    return outcomes
  })
  if (!run.locked) {
    throw new ChatferryError(
      'CHECKPOINT_CONFLICT',
      `another \`chatferry fleet provision\` of fleet ${o.fleet.id} is running (it holds the fleet's lock in the ledger); wait for it, then run again`,
    )
  }
  return run.value
}
