/**
 * `chatferry fleet deprovision --tenant T --yes`: deletes a tenant's app through the management
 * interface. What that means on the platform (documented: `DELETE /apps/{appId}` "schedules the app
 * for deletion"; error guide: `ERR_APP_ARCHIVED` "The app has been archived and will be permanently
 * deleted after 30 days"; `ERR_APP_DELETION`: an app with a paid subscription is not deleted, contact
 * support): the app stops answering at once, its data and keys with it, and is removed for good
 * after 30 days; the management interface has no call that brings it back. The binding keeps the
 * app id and the date, forgets the sealed key, and the tenant is not provisioned again.
 *
 * The fleet key is proven first: the tenant's sealed key must open with it (the key that
 * `provision` would refuse is refused here too), or nothing is sent and the command exits 2.
 */
import { ChatferryError } from '../errors.ts'
import type { FleetBinding, LedgerStore } from '../state/index.ts'
import type { ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { FleetFile } from './fleet-file.ts'
import { type KeyVault, proveFleetKey } from './key-vault.ts'
import { isCredentialsRefusal, selectTenants } from './provision.ts'

/** What deprovisioning did. */
export interface DeprovisionOutcome {
  readonly tenantId: string
  readonly jobId: string
  readonly appId: string
  /** When the platform removes the app for good (its answer; undefined when it gave none). */
  readonly scheduledDeleteAt: Date | undefined
  /** `deleted` now, `already deleted` by an earlier deprovision, `gone` (the platform no longer had it). */
  readonly how: 'deleted' | 'already deleted' | 'gone'
}

/** The words the command prints about what deletion means; one place, so docs/fleets.md quotes it. */
export function deletionMeaning(o: DeprovisionOutcome): string {
  const when = o.scheduledDeleteAt ? ` on ${o.scheduledDeleteAt.toISOString()}` : ' after 30 days'
  return [
    `The platform archives app ${o.appId} at once: every call to it answers ERR_APP_ARCHIVED, its users, groups, messages and API keys stop working,`,
    `and it is permanently deleted${when}. The management interface has no call that restores it.`,
    `The ledger keeps tenant ${o.tenantId}'s job ${o.jobId} and the app's id; the sealed key is erased. \`fleet provision\` will not create a new app for this tenant:`,
    `give a new app a new tenant id. \`chatferry purge --job ${o.jobId} --yes -c <a configuration whose state.url is the fleet's ledger>\` removes the job's ledger rows.`,
  ].join('\n')
}

function gone(err: unknown): boolean {
  return err instanceof PlatformError && (err.code === 'ERR_APP_NOT_FOUND' || err.code === 'ERR_APP_ARCHIVED')
}

/**
 * Deletes the tenant's app and records it. Throws when the tenant has no app, its stored key does
 * not open with the fleet key (nothing sent), or the platform refuses (`ERR_APP_DELETION`: a paid
 * subscription; credentials: see {@link isCredentialsRefusal}).
 */
export async function deprovisionTenant(
  fleet: FleetFile,
  store: LedgerStore,
  mgmt: ManagementClient,
  vault: KeyVault,
  tenantId: string,
): Promise<DeprovisionOutcome> {
  const [tenant] = selectTenants(fleet, [tenantId])
  const binding: FleetBinding | undefined = await store.fleet.binding(fleet.id, tenantId)
  if (binding?.appId === undefined) {
    throw new ChatferryError(
      'CONFIG_INVALID',
      `tenant ${tenantId} has no app to delete (${binding ? `state ${binding.state}` : 'never provisioned'})`,
    )
  }
  const base = { tenantId, jobId: tenant?.jobId ?? binding.jobId, appId: binding.appId }
  if (binding.state === 'deleted') {
    return { ...base, scheduledDeleteAt: binding.scheduledDeleteAt, how: 'already deleted' }
  }
  if (binding.sealedKey === undefined) {
    throw new ChatferryError(
      'CONFIG_INVALID',
      `tenant ${tenantId}'s binding has app ${binding.appId} but no stored key: the fleet key cannot be proven; nothing was deleted`,
    )
  }
  proveFleetKey(vault, binding.sealedKey, { fleetId: fleet.id, tenantId, appId: binding.appId })
  let scheduledDeleteAt: Date | undefined
  let how: DeprovisionOutcome['how'] = 'deleted'
  try {
    const res = await mgmt.deleteApp(binding.appId)
    scheduledDeleteAt = res.scheduledToDeleteAt ? new Date(res.scheduledToDeleteAt * 1000) : undefined
  } catch (err) {
    if (isCredentialsRefusal(err) || !gone(err)) {
      if (err instanceof PlatformError && err.code === 'ERR_APP_DELETION') {
        throw new ChatferryError(
          'CONFIG_INVALID',
          `app ${binding.appId} has a paid subscription: the platform does not delete it; contact CometChat support (ERR_APP_DELETION)`,
        )
      }
      throw err
    }
    how = 'gone'
  }
  await store.fleet.update(fleet.id, tenantId, {
    state: 'deleted',
    sealedKey: null,
    keyId: null,
    scheduledDeleteAt: scheduledDeleteAt ?? null,
    lastError: null,
  })
  return { ...base, scheduledDeleteAt, how }
}
