/**
 * A tenant's app: created once, or found again. Before the create call the binding is marked
 * (`steps.createSent`), so after a crash between the call and the binding a rerun looks the app up
 * by its name through the list endpoint and binds that one instead of creating a second. An app
 * with the tenant's name that this ledger never asked for is not taken over: provisioning stops for
 * that tenant and says so. The app's fullAccess key is sealed before it is stored.
 */
import { sleep } from '../load/sleep.ts'
import type { FleetBinding, FleetLedger } from '../state/index.ts'
import type { CreatedApp, ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { AppRecord } from '../target/schemas.ts'
import type { FleetTenant } from './fleet-file.ts'
import type { KeyVault } from './key-vault.ts'

/** Apps asked for per list page when looking an app up by name. */
const PAGE = 100
/** Pages read at most (100,000 apps): a list that never ends is an answer we do not trust. */
const MAX_PAGES = 1000

/** A tenant provisioning cannot finish, and why; the fleet goes on with the others. */
export class TenantProblem extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'TenantProblem'
  }
}

/** Every active app whose name is exactly `name` (the list's `searchKey` also matches parts of names and ids). */
export async function appsNamed(mgmt: ManagementClient, name: string): Promise<AppRecord[]> {
  const found: AppRecord[] = []
  for (let page = 1; page <= MAX_PAGES; page++) {
    const list = await mgmt.listApps({ searchKey: name, perPage: PAGE, page })
    found.push(...list.filter((a) => a.name === name))
    if (list.length < PAGE) {
      return found
    }
  }
  throw new TenantProblem(`the app list for ${JSON.stringify(name)} did not end after ${MAX_PAGES} pages`)
}

function fullAccessKey(app: AppRecord): string | undefined {
  return Object.values(app.apiKeys ?? {}).find((k) => k.scope === 'fullAccess')?.apiKey
}

export interface BoundResult {
  readonly binding: FleetBinding
  /** What happened: `created`, `found again` (a crashed earlier attempt's app), or `kept` (already bound). */
  readonly how: 'created' | 'found again' | 'kept'
}

async function bind(ledger: FleetLedger, vault: KeyVault, b: FleetBinding, appId: string, apiKey: string): Promise<FleetBinding> {
  const sealedKey = vault.seal(apiKey, { fleetId: b.fleetId, tenantId: b.tenantId, appId })
  await ledger.update(b.fleetId, b.tenantId, { appId, sealedKey, keyId: vault.keyId, state: 'created', lastError: null })
  return (await ledger.binding(b.fleetId, b.tenantId)) as FleetBinding
}

/** Binds an app found again by name (its key from the list answer). */
async function bindFound(ledger: FleetLedger, vault: KeyVault, tenant: FleetTenant, b: FleetBinding, existing: AppRecord): Promise<FleetBinding> {
  const key = fullAccessKey(existing)
  if (key === undefined) {
    throw new TenantProblem(`its app ${existing.id} was found again by name, but the list gives no key of scope fullAccess for it`)
  }
  if (existing.region !== tenant.region) {
    throw new TenantProblem(`its app ${existing.id} was found again by name in region ${existing.region}, but the fleet file says ${tenant.region}`)
  }
  return bind(ledger, vault, b, existing.id, key)
}

/** The tenant's app, bound in the ledger with its key sealed: kept, found again, or created. */
export async function ensureTenantApp(
  ledger: FleetLedger,
  mgmt: ManagementClient,
  vault: KeyVault,
  tenant: FleetTenant,
  binding: FleetBinding,
): Promise<BoundResult> {
  if (binding.appId !== undefined) {
    if (binding.region !== tenant.region) {
      throw new TenantProblem(
        `its app ${binding.appId} is in region ${binding.region}, the fleet file now says ${tenant.region}: the platform cannot move an app; set region back to ${binding.region}`,
      )
    }
    return { binding, how: 'kept' }
  }
  const named = await appsNamed(mgmt, tenant.appName)
  const createSent = binding.steps.createSent === true
  if (named.length > 1) {
    throw new TenantProblem(
      `${named.length} apps are named ${JSON.stringify(tenant.appName)} (${named.map((a) => a.id).join(', ')}): which one is this tenant's cannot be told; delete the extra ones or rename the tenant's app (app.name)`,
    )
  }
  const [existing] = named
  if (existing !== undefined && !createSent) {
    throw new TenantProblem(
      `an app named ${JSON.stringify(tenant.appName)} already exists (${existing.id}) and this ledger never asked for it: rename the tenant's app (app.name) or delete that app; chatferry does not take over apps it did not create`,
    )
  }
  if (existing !== undefined) {
    return { binding: await bindFound(ledger, vault, tenant, binding, existing), how: 'found again' }
  }
  await ledger.update(binding.fleetId, binding.tenantId, {
    state: 'creating',
    appName: tenant.appName,
    region: tenant.region,
    steps: { ...binding.steps, createSent: true },
  })
  const created = await createOnce(mgmt, tenant)
  if (created.how === 'found again') {
    return { binding: await bindFound(ledger, vault, tenant, binding, created.app), how: 'found again' }
  }
  if (created.region !== tenant.region) {
    throw new TenantProblem(`the platform created app ${created.appId} in region ${created.region}, not ${tenant.region}`)
  }
  const fresh = (await ledger.binding(binding.fleetId, binding.tenantId)) as FleetBinding
  return { binding: await bind(ledger, vault, fresh, created.appId, created.restApiKey), how: 'created' }
}

/** Create attempts after which a create whose fate stays unknown fails the tenant for this pass. */
const CREATE_ATTEMPTS = 4

/**
 * Creates the app, empty: without skipSampleData the platform fills it with its sample users
 * (management-apis.json, create app). The management client does not repeat a create that failed
 * with its fate unknown (a 5xx, a timeout): here the app is looked up by name first — found, it is
 * the one the lost answer would have named — and only then created again.
 */
async function createOnce(
  mgmt: ManagementClient,
  tenant: FleetTenant,
): Promise<(CreatedApp & { how: 'created' }) | { how: 'found again'; app: AppRecord }> {
  for (let attempt = 1; ; attempt++) {
    try {
      const created = await mgmt.createApp({ name: tenant.appName, region: tenant.region, version: tenant.version, skipSampleData: true })
      return { ...created, how: 'created' }
    } catch (err) {
      if (!(err instanceof PlatformError) || !err.retryable || err.status === 429 || attempt >= CREATE_ATTEMPTS) {
        throw err
      }
      const named = await appsNamed(mgmt, tenant.appName)
      if (named.length > 1) {
        throw new TenantProblem(
          `${named.length} apps are named ${JSON.stringify(tenant.appName)} after a create whose answer was lost: delete the extra ones`,
        )
      }
      if (named[0] !== undefined) {
        return { how: 'found again', app: named[0] }
      }
      await sleep(1000 * attempt)
    }
  }
}
