/**
 * The management interface's extension and team endpoints (cometchat/docs `management-apis.json`,
 * `rest-api/extensions-overview.mdx`, `rest-api/management-apis/error-codes`,
 * `…/properties-and-constraints`), headers `key`/`secret`, each call in the request log:
 * - `GET /apps/:appId/extensions`: the published extension list, each with `enabled` for this app
 *   (assumed: the published example shows no per-app state);
 * - `POST /apps/:appId/extensions` `{enabled: [ids], disabled: [ids]}`: per id `{success, message}`
 *   (documented); an id not in the published list fails alone, `{success: false, error: {code:
 *   ERR_EXTENSION_NOT_FOUND}}`, the others applied (the answer is per id as published; the code
 *   documented); enabling an enabled one succeeds again (assumed);
 * - `GET /apps/:appId/collaborators`: `{id, name, email, role, createdAt}` (documented example);
 * - `POST /apps/:appId/collaborators` `{admins, moderators, collaboratorsToRemove}` (emails): per
 *   role and email `{success}` (documented); the app owner's email → `ERR_ALREADY_AN_OWNER`,
 *   removing a non-member → `ERR_NOT_A_COLLABORATOR` (documented codes, per email: assumed);
 *   more than 25 members (documented limit) refuses the whole call, nothing changed (assumed);
 *   adding a member again keeps one row with the role asked last (assumed).
 */
import { sql } from 'kysely'

import {
  EXTENSION_IDS,
  type ExtensionId,
  isExtensionId,
  MAX_COLLABORATORS_PER_APP,
  SetCollaboratorsRequest,
  SetExtensionsRequest,
} from '../target/management-schemas.ts'
import type { AppInfo } from './app-registry.ts'
import { jsonBody, type Reply, type RequestContext } from './http-kit.ts'
import { badRequest, logged, parseWith } from './management-kit.ts'
import type { Route } from './router.ts'
import type { SandboxServices } from './sandbox-services.ts'

/** A display name per published id (the ids are what the platform checks). */
function extensionName(id: ExtensionId): string {
  return id
    .split('-')
    .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
    .join(' ')
}

const nowSeconds = () => Math.floor(Date.now() / 1000)

async function enabledOf(services: SandboxServices, app: AppInfo): Promise<Set<string>> {
  const rows = await services.db
    .selectFrom('app_extensions')
    .select('extension_id')
    .where('app_id', '=', app.id)
    .where('enabled', '=', true)
    .execute()
  return new Set(rows.map((r) => r.extension_id))
}

async function listExtensions(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'extensions', async (app) => {
    const enabled = await enabledOf(services, app)
    const data = EXTENSION_IDS.map((id) => ({ id, name: extensionName(id), author: 'CometChat', isActive: true, enabled: enabled.has(id) }))
    return { status: 200, body: { data } }
  })
}

async function setExtensions(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'extensions', async (app) => {
    const body = parseWith(SetExtensionsRequest, jsonBody(ctx), 'request')
    const on = [...new Set(body.enabled ?? [])]
    const off = [...new Set(body.disabled ?? [])]
    if (on.length + off.length === 0) {
      throw badRequest('Name at least one extension to enable or disable.', { enabled: ['or disabled must name an extension id'] })
    }
    const both = on.filter((id) => off.includes(id))
    if (both.length > 0) {
      throw badRequest(`An extension cannot be enabled and disabled at once: ${both.join(', ')}.`, {
        disabled: both.map((id) => `${id} is also in enabled`),
      })
    }
    const now = nowSeconds()
    const rows = [...on.map((id) => ({ id, enabled: true })), ...off.map((id) => ({ id, enabled: false }))].filter((r) => isExtensionId(r.id))
    if (rows.length > 0) {
      await services.db
        .insertInto('app_extensions')
        .values(rows.map((r) => ({ app_id: app.id, extension_id: r.id, enabled: r.enabled, updated_at: now })))
        .onConflict((oc) => oc.columns(['app_id', 'extension_id']).doUpdateSet((eb) => ({ enabled: eb.ref('excluded.enabled'), updated_at: now })))
        .execute()
    }
    // Per id, as published: an id not in the list fails alone, the others are applied.
    const result = (ids: string[], verb: string) =>
      Object.fromEntries(
        ids.map((id) => [
          id,
          isExtensionId(id)
            ? { success: true, message: `The extension ${id} has been ${verb} successfully.` }
            : {
                success: false,
                message: `The extension ${id.slice(0, 60)} does not exist.`,
                error: { code: 'ERR_EXTENSION_NOT_FOUND', message: `${id.slice(0, 60)} does not correspond to any existing microservice.` },
              },
        ]),
      )
    return { status: 200, body: { data: { enabled: result(on, 'enabled'), disabled: result(off, 'disabled') } } }
  })
}

async function listCollaborators(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'collaborators', async (app) => {
    const rows = await services.db.selectFrom('app_collaborators').selectAll().where('app_id', '=', app.id).orderBy('seq').execute()
    const data = rows.map((r) => ({ id: String(r.seq), name: r.email.split('@')[0], email: r.email, role: r.role, createdAt: Number(r.created_at) }))
    return { status: 200, body: { data } }
  })
}

type Outcome = { success: true } | { success: false; error: { code: string; message: string } }

async function setCollaborators(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'collaborators', async (app) => {
    const body = parseWith(SetCollaboratorsRequest, jsonBody(ctx), 'request')
    const lower = (list: readonly string[] | undefined) => [...new Set((list ?? []).map((e) => e.toLowerCase()))]
    const admins = lower(body.admins)
    const moderators = lower(body.moderators).filter((e) => !admins.includes(e))
    const remove = lower(body.collaboratorsToRemove)
    if (admins.length + moderators.length + remove.length === 0) {
      throw badRequest('Name at least one email in admins, moderators or collaboratorsToRemove.')
    }
    const owner = String((services.registry.record(app).appOwner as { email: string }).email).toLowerCase()
    const out = await services.db.transaction().execute(async (trx) => {
      // One change at a time per app, so the 25 limit holds under concurrent calls.
      await sql`select pg_advisory_xact_lock(hashtext(${`sandbox.collaborators:${app.id}`}))`.execute(trx)
      const current = new Set((await trx.selectFrom('app_collaborators').select('email').where('app_id', '=', app.id).execute()).map((r) => r.email))
      const results = {
        admins: {} as Record<string, Outcome>,
        moderators: {} as Record<string, Outcome>,
        collaboratorsToRemove: {} as Record<string, Outcome>,
      }
      const after = new Set(current)
      for (const email of remove) {
        if (!current.has(email)) {
          results.collaboratorsToRemove[email] = {
            success: false,
            error: { code: 'ERR_NOT_A_COLLABORATOR', message: `${email} is not a collaborator of this app.` },
          }
        } else {
          after.delete(email)
          results.collaboratorsToRemove[email] = { success: true }
        }
      }
      const adds = [
        ...admins.map((e) => ({ email: e, role: 'admin', key: 'admins' as const })),
        ...moderators.map((e) => ({ email: e, role: 'moderator', key: 'moderators' as const })),
      ]
      const accepted = adds.filter((a) => {
        if (a.email === owner) {
          results[a.key][a.email] = {
            success: false,
            error: { code: 'ERR_ALREADY_AN_OWNER', message: `${a.email} is already the owner of the app.` },
          }
          return false
        }
        after.add(a.email)
        results[a.key][a.email] = { success: true }
        return true
      })
      if (after.size > MAX_COLLABORATORS_PER_APP) {
        throw badRequest(`An app has at most ${MAX_COLLABORATORS_PER_APP} collaborators; this call would make ${after.size}. Nothing was changed.`, {
          admins: [`at most ${MAX_COLLABORATORS_PER_APP} collaborators per app`],
        })
      }
      const gone = remove.filter((e) => current.has(e))
      if (gone.length > 0) {
        await trx.deleteFrom('app_collaborators').where('app_id', '=', app.id).where('email', 'in', gone).execute()
      }
      if (accepted.length > 0) {
        const now = nowSeconds()
        await trx
          .insertInto('app_collaborators')
          .values(accepted.map((a) => ({ app_id: app.id, email: a.email, role: a.role, created_at: now })))
          .onConflict((oc) => oc.columns(['app_id', 'email']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })))
          .execute()
      }
      return results
    })
    // The published example answers a role the body did not name with [].
    const shown = (r: Record<string, Outcome>) => (Object.keys(r).length > 0 ? r : [])
    return {
      status: 200,
      body: {
        data: {
          collaboratorsToRemove: shown(out.collaboratorsToRemove),
          admins: shown(out.admins),
          developers: [],
          moderators: shown(out.moderators),
        },
      },
    }
  })
}

/** The extension and team routes of the management interface. */
export function managementTeamRoutes(services: SandboxServices): Route[] {
  return [
    { method: 'GET', pattern: '/apps/:appId/extensions', handler: (ctx) => listExtensions(services, ctx) },
    { method: 'POST', pattern: '/apps/:appId/extensions', readsBody: true, handler: (ctx) => setExtensions(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/collaborators', handler: (ctx) => listCollaborators(services, ctx) },
    { method: 'POST', pattern: '/apps/:appId/collaborators', readsBody: true, handler: (ctx) => setCollaborators(services, ctx) },
  ]
}
