/**
 * The management interface (documented: facts §6): `POST /apps`, `GET /apps`, `DELETE
 * /apps/:appId`, headers `key`/`secret`; and webhooks as published (facts i12 §4,
 * cometchat/docs `management-apis.json`): `/apps/:appId/webhooks[/:webhookId]` and the triggers
 * sub-resource `/apps/:appId/webhooks/:webhookId/triggers`, each taking `X-Webhook-Version`
 * (absent: a legacy webhook, `2`: the new implementation). Management error codes beyond the
 * published table (`ERR_WEBHOOK_NOT_FOUND`, `ERR_BAD_REQUEST`, `ERR_TRIGGER_NOT_FOUND`,
 * `AUTH_ERR_EMPTY_AUTH_HEADER`) and every HTTP status are assumed (README). Creations and
 * deletions of apps are in the app's request log (endpoint `apps`). A created app holds the
 * platform's sample users unless the body says `skipSampleData: true` (create app, published).
 */
import { type Selectable, sql } from 'kysely'
import { z } from 'zod'

import { SAMPLE_USERS } from '../target/sample-data.ts'
import { CreateAppRequest } from '../target/schemas.ts'
import {
  CreateWebhookRequest,
  isWebhookTrigger,
  UpdateWebhookRequest,
  WEBHOOK_LIMITS,
  WEBHOOK_VERSION_HEADER,
  type WebhookVersion,
} from '../target/webhooks.ts'
import type { AppInfo } from './app-registry.ts'
import { authenticateManagement } from './auth.ts'
import { header, HttpError, intParam, isPlainObject, jsonBody, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
import { appOf, badRequest, logged, parseWith } from './management-kit.ts'
import { managementTeamRoutes } from './management-team-routes.ts'
import type { Route } from './router.ts'
import type { SandboxServices } from './sandbox-services.ts'
import { toJson, type WebhooksTable } from './sandbox-store.ts'

async function createApp(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const parsed = CreateAppRequest.safeParse(jsonBody(ctx))
  if (!parsed.success) {
    throw badRequest('The app could not be created: the body is invalid.', zodDetails(parsed.error.issues))
  }
  if (parsed.data.version !== '3') {
    throw badRequest('Only version "3" apps can be created.', { version: ['must be "3"'] })
  }
  // Documented code and words; the number of apps allowed is not published (assumed: `maxApps`,
  // counting every active app of the sandbox, as an account's apps).
  if (services.registry.list().length >= services.maxApps) {
    throw new HttpError(
      403,
      'ERR_APP_CREATION_FAILED_MAX_LIMIT',
      'You have reached the maximum number of complimentary apps allowed. Delete an existing app or upgrade to a paid plan, then try again.',
    )
  }
  const app = await services.registry.create({ name: parsed.data.name, region: parsed.data.region })
  // As published: a new app holds the platform's sample users unless the body says skipSampleData.
  if (parsed.data.skipSampleData !== true) {
    await fillSampleData(services, app.id)
  }
  logAppCall(services, ctx, app.id, 200)
  return { status: 200, body: { data: services.registry.record(app) } }
}

/** The platform's sample users in a new app (src/target/sample-data.ts). */
async function fillSampleData(services: SandboxServices, appId: string): Promise<void> {
  const now = Math.floor(Date.now() / 1000)
  await services.db
    .insertInto('users')
    .values(
      SAMPLE_USERS.map((u) => ({
        app_id: appId,
        uid: u.uid,
        name: u.name,
        avatar: null,
        link: null,
        role: 'default',
        metadata: null,
        tags: toJson([]),
        created_at: now,
        updated_at: now,
        last_active_at: null,
        deactivated_at: null,
      })),
    )
    .execute()
}

/** A creation or deletion in the app's request log (endpoint `apps`): a test proves from it how often an app was created. */
function logAppCall(services: SandboxServices, ctx: RequestContext, appId: string, status: number): void {
  services.requestLog.add({
    appId,
    receivedAtMs: ctx.receivedAtMs,
    method: ctx.method,
    path: ctx.path,
    endpoint: 'apps',
    itemCount: null,
    status,
    code: null,
    fault: null,
    committed: 0,
    latencyMs: 0,
    durationMs: Date.now() - ctx.receivedAtMs,
    items: null,
  })
}

async function listApps(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const perPage = intParam(ctx.query, 'perPage', 100, 1, 1000)
  const page = intParam(ctx.query, 'page', 1, 1, 10_000_000)
  const search = ctx.query.get('searchKey')?.toLowerCase()
  const all = services.registry.list().filter((a) => !search || a.id.toLowerCase().includes(search) || a.name.toLowerCase().includes(search))
  const slice = all.slice((page - 1) * perPage, page * perPage)
  return {
    status: 200,
    body: {
      data: slice.map((a) => services.registry.record(a)),
      meta: {
        pagination: { total: all.length, count: slice.length, per_page: perPage, current_page: page, total_pages: Math.ceil(all.length / perPage) },
      },
    },
  }
}

async function deleteApp(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const app = appOf(services, ctx)
  const scheduledToDeleteAt = await services.registry.delete(app.id)
  logAppCall(services, ctx, app.id, 200)
  services.limiter.reset(app.id)
  services.limiter.reset(`chat:${app.id}`)
  return { status: 200, body: { data: { success: true, scheduledToDeleteAt } } }
}

// ─── webhooks ────────────────────────────────────────────────────────────────────────────────────

/**
 * The implementation a request asks for. Documented: absent = legacy, `"2"` = the new one. Any
 * other value is refused (assumed: the docs name no third value).
 */
function versionOf(ctx: RequestContext): WebhookVersion {
  const raw = header(ctx, WEBHOOK_VERSION_HEADER)
  if (raw === undefined) {
    return 'legacy'
  }
  if (raw.trim() === '2') {
    return '2'
  }
  throw badRequest(`${WEBHOOK_VERSION_HEADER} must be "2", or absent for a legacy webhook.`, { [WEBHOOK_VERSION_HEADER]: ['must be "2" or absent'] })
}

/**
 * A webhook as answered: the documented fields (`webhookSchema`: id, name, webhookURL, enabled;
 * the examples add createdAt, updatedAt) and the sandbox's `version`. Never the username or the
 * password (documented: no answer shows them).
 */
function webhookObject(r: Selectable<WebhooksTable>): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    webhookURL: r.webhook_url,
    enabled: r.enabled,
    version: r.version,
    createdAt: Number(r.created_at),
    updatedAt: Number(r.updated_at),
  }
}

function pagination(total: number, count: number, perPage: number, page: number) {
  return { total, count, per_page: perPage, current_page: page, total_pages: Math.ceil(total / perPage) }
}

async function findWebhook(services: SandboxServices, app: AppInfo, ctx: RequestContext) {
  const id = ctx.params.webhookId ?? ''
  const row = await services.db.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).where('id', '=', id).executeTakeFirst()
  if (!row) {
    throw new HttpError(404, 'ERR_WEBHOOK_NOT_FOUND', `The webhook ${id.slice(0, 60)} does not exist.`)
  }
  return row
}

async function createWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhooks', async (app) => {
    const version = versionOf(ctx)
    const w = parseWith(CreateWebhookRequest, jsonBody(ctx), 'webhook')
    const now = Math.floor(Date.now() / 1000)
    const row = await services.db.transaction().execute(async (trx) => {
      // One creation at a time per app, so the 25 limit holds under concurrent requests.
      await sql`select pg_advisory_xact_lock(hashtext(${`sandbox.webhooks:${app.id}`}))`.execute(trx)
      const count = await trx
        .selectFrom('webhooks')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('app_id', '=', app.id)
        .executeTakeFirstOrThrow()
      if (Number(count.n) >= WEBHOOK_LIMITS.PER_APP_MAX) {
        throw badRequest(`An app has at most ${WEBHOOK_LIMITS.PER_APP_MAX} webhooks.`, {
          id: [`at most ${WEBHOOK_LIMITS.PER_APP_MAX} webhooks per app`],
        })
      }
      return trx
        .insertInto('webhooks')
        .values({
          app_id: app.id,
          id: w.id,
          name: w.name,
          webhook_url: w.webhookURL,
          use_basic_auth: w.useBasicAuth,
          username: w.username ?? null,
          password: w.password ?? null,
          enabled: w.enabled,
          retry_on_failure: w.retryOnFailure,
          version,
          created_at: now,
          updated_at: now,
        })
        .onConflict((oc) => oc.columns(['app_id', 'id']).doNothing())
        .returningAll()
        .executeTakeFirst()
    })
    if (!row) {
      throw badRequest(`The app already has a webhook with the id ${w.id}.`, { id: ['already exists'] })
    }
    // The published example answers create with an array: [{"data": {…}}].
    return { status: 200, body: [{ data: webhookObject(row) }] }
  })
}

async function listWebhooks(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhooks', async (app) => {
    versionOf(ctx)
    const perPage = intParam(ctx.query, 'perPage', 100, 1, 1000)
    const page = intParam(ctx.query, 'page', 1, 1, 10_000_000)
    const search = ctx.query.get('searchKey')?.toLowerCase()
    const rows = await services.db.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).orderBy('seq').execute()
    const all = rows.filter((r) => !search || r.name.toLowerCase().includes(search))
    const slice = all.slice((page - 1) * perPage, page * perPage)
    return { status: 200, body: { data: slice.map(webhookObject), meta: { pagination: pagination(all.length, slice.length, perPage, page) } } }
  })
}

async function getWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhooks', async (app) => {
    versionOf(ctx)
    const row = await findWebhook(services, app, ctx)
    // The published example: {"data": [{"data": {…}}]}.
    return { status: 200, body: { data: [{ data: webhookObject(row) }] } }
  })
}

async function updateWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhooks', async (app) => {
    versionOf(ctx)
    const row = await findWebhook(services, app, ctx)
    const body = jsonBody(ctx)
    if (!isPlainObject(body)) {
      throw badRequest('The body must be a JSON object.')
    }
    const w = parseWith(UpdateWebhookRequest, body, 'webhook')
    const next = {
      name: w.name ?? row.name,
      webhook_url: w.webhookURL ?? row.webhook_url,
      use_basic_auth: w.useBasicAuth ?? row.use_basic_auth,
      username: w.username ?? row.username,
      password: w.password ?? row.password,
      enabled: w.enabled ?? row.enabled,
      retry_on_failure: w.retryOnFailure ?? row.retry_on_failure,
    }
    if (next.use_basic_auth && (!next.username || !next.password)) {
      throw badRequest('A webhook with useBasicAuth needs a username and a password.', {
        ...(next.username ? {} : { username: ['is required when useBasicAuth is true'] }),
        ...(next.password ? {} : { password: ['is required when useBasicAuth is true'] }),
      })
    }
    const updated = await services.db
      .updateTable('webhooks')
      .set({ ...next, updated_at: Math.floor(Date.now() / 1000) })
      .where('app_id', '=', app.id)
      .where('id', '=', row.id)
      .returningAll()
      .executeTakeFirstOrThrow()
    return { status: 200, body: { data: [{ data: webhookObject(updated) }] } }
  })
}

async function deleteWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhooks', async (app) => {
    versionOf(ctx)
    const row = await findWebhook(services, app, ctx)
    await services.db.deleteFrom('webhooks').where('app_id', '=', app.id).where('id', '=', row.id).execute()
    return { status: 200, body: { data: { success: true, message: 'Deleted Webhook successfully.' } } }
  })
}

// ─── triggers (a sub-resource of a webhook) ──────────────────────────────────────────────────────

const TriggerIdsBody = z.object({ triggerIds: z.array(z.string()).min(1) }).strict()

/** The trigger ids of a body, in order, each once. */
function requestedTriggers(ctx: RequestContext): string[] {
  return [...new Set(parseWith(TriggerIdsBody, jsonBody(ctx), 'request').triggerIds)]
}

/**
 * The webhook a triggers call names, addressed with its own implementation: the triggers
 * sub-resource is the version-2 webhooks' (`X-Webhook-Version: 2`); without the header the call
 * addresses the legacy webhooks, among which a version-2 webhook is not found (404).
 */
async function findTriggersWebhook(services: SandboxServices, app: AppInfo, ctx: RequestContext) {
  const version = versionOf(ctx)
  const row = await findWebhook(services, app, ctx)
  if (row.version !== version) {
    const id = row.id.slice(0, 60)
    throw new HttpError(
      404,
      'ERR_WEBHOOK_NOT_FOUND',
      `The webhook ${id} does not exist${version === 'legacy' ? ` among the legacy webhooks: send ${WEBHOOK_VERSION_HEADER}: 2` : ''}.`,
    )
  }
  return row
}

/** The trigger ids of a body; any id not in the documented list → ERR_TRIGGER_NOT_FOUND, nothing changes. */
function triggerIdsOf(ctx: RequestContext): string[] {
  const { triggerIds } = parseWith(TriggerIdsBody, jsonBody(ctx), 'request')
  const unknown = [...new Set(triggerIds.filter((id) => !isWebhookTrigger(id)))]
  if (unknown.length > 0) {
    throw new HttpError(404, 'ERR_TRIGGER_NOT_FOUND', `Trigger ${unknown.map((id) => id.slice(0, 60)).join(', ')} does not exist.`, {
      details: { triggerIds: unknown.map((id) => `${id.slice(0, 60)} does not exist`) },
    })
  }
  return [...new Set(triggerIds)]
}

/** A short text per trigger (assumed: the published list answer shows "[Beta] …" texts, not each one). */
function describeTrigger(id: string): string {
  return `Fires on ${id.replace(/^after_/, '').replace(/_/g, ' ')}.`
}

async function addTriggers(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhook-triggers', async (app) => {
    const row = await findTriggersWebhook(services, app, ctx)
    const ids = requestedTriggers(ctx)
    const known = ids.filter((id) => isWebhookTrigger(id))
    const added =
      known.length === 0
        ? []
        : await services.db
            .insertInto('webhook_triggers')
            .values(known.map((trigger_id) => ({ app_id: app.id, webhook_id: row.id, trigger_id })))
            .onConflict((oc) => oc.columns(['app_id', 'webhook_id', 'trigger_id']).doNothing())
            .returning('trigger_id')
            .execute()
    const fresh = new Set(added.map((r) => r.trigger_id))
    // Per trigger, as published: an unknown id fails alone, the others are added.
    const data: Record<string, unknown> = {}
    for (const id of ids) {
      data[id] = !isWebhookTrigger(id)
        ? { success: false, error: { code: 'ERR_TRIGGER_NOT_FOUND', message: `Trigger ${id.slice(0, 60)} does not exist.` } }
        : fresh.has(id)
          ? { success: true, message: 'Triggers has been added successfully.' }
          : { success: false, error: { code: 'ERR_BAD_REQUEST', message: `The trigger ${id} is already added to the webhook.` } }
    }
    return { status: 200, body: { data } }
  })
}

async function listTriggers(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhook-triggers', async (app) => {
    const row = await findTriggersWebhook(services, app, ctx)
    const perPage = intParam(ctx.query, 'perPage', 100, 1, 1000)
    const page = intParam(ctx.query, 'page', 1, 1, 10_000_000)
    const rows = await services.db
      .selectFrom('webhook_triggers')
      .select('trigger_id')
      .where('app_id', '=', app.id)
      .where('webhook_id', '=', row.id)
      .orderBy('seq')
      .execute()
    const slice = rows.slice((page - 1) * perPage, page * perPage)
    return {
      status: 200,
      body: {
        data: slice.map((r) => ({ id: r.trigger_id, description: describeTrigger(r.trigger_id) })),
        meta: { pagination: pagination(rows.length, slice.length, perPage, page) },
      },
    }
  })
}

async function removeTriggers(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  return logged(services, ctx, 'webhook-triggers', async (app) => {
    const row = await findTriggersWebhook(services, app, ctx)
    const ids = triggerIdsOf(ctx)
    await services.db.transaction().execute(async (trx) => {
      const present = await trx
        .selectFrom('webhook_triggers')
        .select('trigger_id')
        .where('app_id', '=', app.id)
        .where('webhook_id', '=', row.id)
        .where('trigger_id', 'in', ids)
        .execute()
      const have = new Set(present.map((r) => r.trigger_id))
      const missing = ids.filter((id) => !have.has(id))
      if (missing.length > 0) {
        throw new HttpError(404, 'ERR_TRIGGER_NOT_FOUND', `The webhook has no trigger ${missing.join(', ')}; nothing was removed.`, {
          details: { triggerIds: missing.map((id) => `${id} is not added to the webhook`) },
        })
      }
      await trx.deleteFrom('webhook_triggers').where('app_id', '=', app.id).where('webhook_id', '=', row.id).where('trigger_id', 'in', ids).execute()
    })
    return { status: 200, body: { data: { success: true, message: 'Removed trigger successfully.' } } }
  })
}

/** The management routes (apps, webhooks, and extensions and team: management-team-routes.ts). */
export function managementRoutes(services: SandboxServices): Route[] {
  return [
    ...managementTeamRoutes(services),
    { method: 'POST', pattern: '/apps', readsBody: true, handler: (ctx) => createApp(services, ctx) },
    { method: 'GET', pattern: '/apps', handler: (ctx) => listApps(services, ctx) },
    { method: 'DELETE', pattern: '/apps/:appId', handler: (ctx) => deleteApp(services, ctx) },
    { method: 'POST', pattern: '/apps/:appId/webhooks', readsBody: true, handler: (ctx) => createWebhook(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/webhooks', handler: (ctx) => listWebhooks(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/webhooks/:webhookId', handler: (ctx) => getWebhook(services, ctx) },
    { method: 'PUT', pattern: '/apps/:appId/webhooks/:webhookId', readsBody: true, handler: (ctx) => updateWebhook(services, ctx) },
    { method: 'DELETE', pattern: '/apps/:appId/webhooks/:webhookId', handler: (ctx) => deleteWebhook(services, ctx) },
    { method: 'POST', pattern: '/apps/:appId/webhooks/:webhookId/triggers', readsBody: true, handler: (ctx) => addTriggers(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/webhooks/:webhookId/triggers', handler: (ctx) => listTriggers(services, ctx) },
    { method: 'DELETE', pattern: '/apps/:appId/webhooks/:webhookId/triggers', readsBody: true, handler: (ctx) => removeTriggers(services, ctx) },
  ]
}
