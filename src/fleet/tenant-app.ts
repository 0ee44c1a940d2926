/**
 * A tenant's app as a job needs it: its id, region and fullAccess key, the key opened from the
 * binding with the fleet key. Only the process that runs the tenant's job opens it; the key lives
 * in memory and in the request header, nowhere else.
 */
import type { FleetBinding } from '../state/index.ts'
import type { Region } from '../target/config.ts'
import type { BoundApp } from './fleet-file.ts'
import type { KeyVault } from './key-vault.ts'

/** Bindings a job can run against: an app created (or found again) and its key sealed. */
const USABLE = new Set(['created', 'provisioned'])

/** Why a tenant cannot run yet (its binding's state), or undefined when it can. */
export function unboundReason(binding: FleetBinding | undefined): string | undefined {
  if (binding === undefined) {
    return 'not provisioned: run `chatferry fleet provision` first'
  }
  if (binding.state === 'deleted') {
    return `its app ${binding.appId ?? ''} was deprovisioned (deleted)`
  }
  if (!USABLE.has(binding.state) || binding.appId === undefined || binding.sealedKey === undefined) {
    return `not provisioned (state ${binding.state}${binding.lastError ? `: ${binding.lastError}` : ''}): run \`chatferry fleet provision\``
  }
  return undefined
}

/** The bound app with its key opened; throws when the tenant has no usable binding or the key does not open. */
export function boundAppOf(binding: FleetBinding | undefined, vault: KeyVault): BoundApp {
  const reason = unboundReason(binding)
  if (reason !== undefined || binding === undefined) {
    throw new Error(`tenant ${binding?.tenantId ?? '?'}: ${reason}`)
  }
  const appId = binding.appId as string
  const apiKey = vault.open(binding.sealedKey as string, { fleetId: binding.fleetId, tenantId: binding.tenantId, appId })
  return { appId, region: binding.region as Region, apiKey }
}
