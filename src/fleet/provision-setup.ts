/**
 * What provisioning does to a tenant's app once it exists: enables the extensions the fleet file
 * names, adds the team members it names, and configures its webhooks (version 2, with their
 * triggers). Each step records what it did in the binding (`steps`), so a rerun sends only what is
 * missing; a refusal of any item stops the tenant with the item named.
 */
import type { FleetBinding, FleetLedger, ProvisionSteps } from '../state/index.ts'
import type { ManagementClient } from '../target/client.ts'
import { PlatformError } from '../target/errors.ts'
import type { CollaboratorResult, ExtensionResult } from '../target/management-schemas.ts'
import type { FleetTenant, FleetWebhook } from './fleet-file.ts'
import { TenantProblem } from './provision-app.ts'

const describe = (id: string, r: ExtensionResult | CollaboratorResult | undefined) =>
  `${id}: ${r === undefined ? 'no answer for it' : `${r.error?.code ?? 'refused'}${r.error?.message || r.message ? ` (${r.error?.message ?? r.message})` : ''}`}`

async function record(ledger: FleetLedger, b: FleetBinding, steps: ProvisionSteps): Promise<FleetBinding> {
  await ledger.update(b.fleetId, b.tenantId, { steps })
  return { ...b, steps }
}

/** Enables the named extensions not enabled yet; returns the binding and how many were enabled. */
async function enableExtensions(ledger: FleetLedger, mgmt: ManagementClient, t: FleetTenant, b: FleetBinding): Promise<[FleetBinding, number]> {
  const done = new Set(b.steps.extensions ?? [])
  const missing = t.extensions.filter((id) => !done.has(id))
  if (missing.length === 0) {
    return [b, 0]
  }
  const { enabled } = await mgmt.setExtensions(b.appId as string, { enabled: missing })
  const failed = missing.filter((id) => enabled.get(id)?.success !== true)
  const ok = missing.filter((id) => !failed.includes(id))
  const next = await record(ledger, b, { ...b.steps, extensions: [...done, ...ok] })
  if (failed.length > 0) {
    throw new TenantProblem(`extensions refused: ${failed.map((id) => describe(id, enabled.get(id))).join('; ')}`)
  }
  return [next, ok.length]
}

/** Adds the named admins and moderators not added yet; returns the binding and how many were added. */
async function addTeam(ledger: FleetLedger, mgmt: ManagementClient, t: FleetTenant, b: FleetBinding): Promise<[FleetBinding, number]> {
  const lower = (list: readonly string[] | undefined) => new Set((list ?? []).map((e) => e.toLowerCase()))
  const doneAdmins = lower(b.steps.team?.admins)
  const doneModerators = lower(b.steps.team?.moderators)
  const admins = t.team.admins.filter((e) => !doneAdmins.has(e.toLowerCase()))
  const moderators = t.team.moderators.filter((e) => !doneModerators.has(e.toLowerCase()))
  if (admins.length + moderators.length === 0) {
    return [b, 0]
  }
  const results = await mgmt.setCollaborators(b.appId as string, {
    ...(admins.length ? { admins } : {}),
    ...(moderators.length ? { moderators } : {}),
  })
  const okIn = (role: 'admins' | 'moderators', list: string[]) =>
    list.filter((e) => results.get(role)?.get(e)?.success === true || results.get(role)?.get(e.toLowerCase())?.success === true)
  const addedAdmins = okIn('admins', admins)
  const addedModerators = okIn('moderators', moderators)
  const next = await record(ledger, b, {
    ...b.steps,
    team: {
      admins: [...doneAdmins, ...addedAdmins.map((e) => e.toLowerCase())],
      moderators: [...doneModerators, ...addedModerators.map((e) => e.toLowerCase())],
    },
  })
  const refused = [
    ...admins
      .filter((e) => !addedAdmins.includes(e))
      .map((e) => describe(`admin ${e}`, results.get('admins')?.get(e) ?? results.get('admins')?.get(e.toLowerCase()))),
    ...moderators
      .filter((e) => !addedModerators.includes(e))
      .map((e) => describe(`moderator ${e}`, results.get('moderators')?.get(e) ?? results.get('moderators')?.get(e.toLowerCase()))),
  ]
  if (refused.length > 0) {
    throw new TenantProblem(`team members refused: ${refused.join('; ')}`)
  }
  return [next, addedAdmins.length + addedModerators.length]
}

const sameTriggers = (a: readonly string[], b: readonly string[]) => a.length === b.length && a.every((x) => b.includes(x))

/** Creates (or, when it exists, updates) one webhook, then adds the triggers it lacks. */
async function configureWebhook(mgmt: ManagementClient, appId: string, w: FleetWebhook, exists: boolean): Promise<void> {
  const fields = {
    name: w.name,
    webhookURL: w.webhookURL,
    useBasicAuth: w.useBasicAuth,
    ...(w.username !== undefined ? { username: w.username } : {}),
    ...(w.password !== undefined ? { password: w.password } : {}),
    enabled: w.enabled,
    retryOnFailure: w.retryOnFailure,
  }
  if (exists) {
    await mgmt.updateWebhook(appId, w.id, fields)
  } else {
    try {
      await mgmt.createWebhook(appId, { id: w.id, ...fields })
    } catch (err) {
      // A create whose fate is unknown (5xx, timeout) is not repeated by the client: made after all, it is updated.
      if (!(err instanceof PlatformError) || !err.retryable || err.status === 429) {
        throw err
      }
      if (!(await mgmt.listWebhooks(appId, { perPage: 100 })).some((x) => x.id === w.id)) {
        throw err
      }
      await mgmt.updateWebhook(appId, w.id, fields)
    }
  }
  const have = new Set((await mgmt.listWebhookTriggers(appId, w.id)).map((t) => t.id))
  const missing = w.triggers.filter((id) => !have.has(id))
  if (missing.length === 0) {
    return
  }
  const added = await mgmt.addWebhookTriggers(appId, w.id, missing)
  const refused = missing.filter((id) => added.get(id)?.success !== true)
  if (refused.length > 0) {
    throw new TenantProblem(`webhook ${w.id}: triggers refused: ${refused.map((id) => `${id} (${added.get(id)?.code ?? 'no answer'})`).join(', ')}`)
  }
}

/** Configures the named webhooks not configured yet (or whose triggers changed); returns the binding and how many. */
async function configureWebhooks(ledger: FleetLedger, mgmt: ManagementClient, t: FleetTenant, b: FleetBinding): Promise<[FleetBinding, number]> {
  const done = b.steps.webhooks ?? []
  const todo = t.webhooks.filter((w) => !done.some((d) => d.id === w.id && sameTriggers(d.triggers, w.triggers)))
  if (todo.length === 0) {
    return [b, 0]
  }
  const appId = b.appId as string
  const existing = new Set((await mgmt.listWebhooks(appId, { perPage: 100 })).map((w) => w.id))
  let next = b
  for (const w of todo) {
    await configureWebhook(mgmt, appId, w, existing.has(w.id))
    next = await record(ledger, next, {
      ...next.steps,
      webhooks: [...(next.steps.webhooks ?? []).filter((d) => d.id !== w.id), { id: w.id, triggers: [...w.triggers] }],
    })
  }
  return [next, todo.length]
}

/** What the setup steps did this time. */
export interface SetupCounts {
  readonly extensions: number
  readonly team: number
  readonly webhooks: number
}

/** Runs the three steps in order; the binding is `provisioned` when all are done. */
export async function setUpTenantApp(ledger: FleetLedger, mgmt: ManagementClient, t: FleetTenant, b: FleetBinding): Promise<SetupCounts> {
  const [b1, extensions] = await enableExtensions(ledger, mgmt, t, b)
  const [b2, team] = await addTeam(ledger, mgmt, t, b1)
  const [, webhooks] = await configureWebhooks(ledger, mgmt, t, b2)
  await ledger.update(b.fleetId, b.tenantId, { state: 'provisioned', lastError: null })
  return { extensions, team, webhooks }
}
