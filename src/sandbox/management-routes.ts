/**
 * The management interface (documented: facts §6): `POST /apps`, `GET /apps`, `DELETE
 * /apps/:appId`, headers `key`/`secret`. Webhook configuration lives at `/apps/:appId/webhooks`
 * — that path is ASSUMED (the docs list "webhooks: create, list, update, delete" without paths);
 * its fields and limits are documented (spec §2.2, facts §6). Management error codes are not
 * documented (gap 10); the codes used here for a missing app or webhook are assumed.
 */
import type { Selectable } from 'kysely'

import { CreateAppRequest, LIMITS, WebhookConfig } from '../target/schemas.ts'
import type { AppInfo } from './app-registry.ts'
import { authenticateManagement, throwIfArchived } from './auth.ts'
import { HttpError, intParam, isPlainObject, jsonBody, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
import type { Route } from './router.ts'
import type { SandboxServices } from './sandbox-services.ts'
import type { WebhooksTable } from './sandbox-store.ts'
import { webhookUrlProblem } from './webhook-dispatcher.ts'

function badRequest(message: string, details?: Record<string, string[]>): HttpError {
  return new HttpError(400, 'ERR_BAD_REQUEST', message, details ? { details } : {})
}

function appOf(services: SandboxServices, ctx: RequestContext): AppInfo {
  const appId = ctx.params.appId ?? ''
  const app = services.registry.get(appId)
  if (!app) {
    throwIfArchived(services.registry, appId)
    throw new HttpError(404, 'ERR_APP_NOT_FOUND', `The app ${appId} does not exist or has been deleted.`)
  }
  return app
}

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
  return { status: 200, body: { data: services.registry.record(app) } }
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
  services.limiter.reset(app.id)
  services.limiter.reset(`chat:${app.id}`)
  return { status: 200, body: { data: { success: true, scheduledToDeleteAt } } }
}

// ─── webhooks ────────────────────────────────────────────────────────────────────────────────────

/** A webhook as answered: the documented configuration fields, except the password (a secret). */
function webhookObject(r: Selectable<WebhooksTable>): Record<string, unknown> {
  return {
    id: r.id,
    name: r.name,
    webhookURL: r.webhook_url,
    useBasicAuth: r.use_basic_auth,
    ...(r.username !== null ? { username: r.username } : {}),
    enabled: r.enabled,
    ...(r.triggers !== null ? { triggers: r.triggers } : {}),
  }
}

/** Validates a full webhook configuration (documented fields and limits, plus the URL rule). */
function checkWebhook(input: unknown) {
  const parsed = WebhookConfig.safeParse(input)
  if (!parsed.success) {
    throw badRequest('The webhook is invalid.', zodDetails(parsed.error.issues))
  }
  const w = parsed.data
  const problem = webhookUrlProblem(w.webhookURL)
  if (problem) {
    throw badRequest(`webhookURL ${problem}.`, { webhookURL: [problem] })
  }
  if (w.useBasicAuth && (!w.username || !w.password)) {
    throw badRequest('A webhook with useBasicAuth needs a username and a password.', {
      ...(w.username ? {} : { username: ['is required when useBasicAuth is true'] }),
      ...(w.password ? {} : { password: ['is required when useBasicAuth is true'] }),
    })
  }
  return w
}

async function createWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const app = appOf(services, ctx)
  const w = checkWebhook(jsonBody(ctx))
  const count = await services.db
    .selectFrom('webhooks')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('app_id', '=', app.id)
    .executeTakeFirstOrThrow()
  if (Number(count.n) >= LIMITS.WEBHOOKS_PER_APP_MAX) {
    throw badRequest(`An app has at most ${LIMITS.WEBHOOKS_PER_APP_MAX} webhooks.`, {
      id: [`at most ${LIMITS.WEBHOOKS_PER_APP_MAX} webhooks per app`],
    })
  }
  const row = await services.db
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
      triggers: w.triggers ? JSON.stringify(w.triggers) : null,
      created_at: Math.floor(Date.now() / 1000),
    })
    .onConflict((oc) => oc.columns(['app_id', 'id']).doNothing())
    .returningAll()
    .executeTakeFirst()
  if (!row) {
    throw new HttpError(409, 'ERR_WEBHOOK_ALREADY_EXISTS', `The app already has a webhook with the id ${w.id}.`)
  }
  return { status: 200, body: { data: webhookObject(row) } }
}

async function listWebhooks(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const app = appOf(services, ctx)
  const rows = await services.db.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).orderBy('seq').execute()
  return { status: 200, body: { data: rows.map(webhookObject) } }
}

async function findWebhook(services: SandboxServices, ctx: RequestContext) {
  const app = appOf(services, ctx)
  const id = ctx.params.webhookId ?? ''
  const row = await services.db.selectFrom('webhooks').selectAll().where('app_id', '=', app.id).where('id', '=', id).executeTakeFirst()
  if (!row) {
    throw new HttpError(404, 'ERR_WEBHOOK_NOT_FOUND', `The app has no webhook with the id ${id}.`)
  }
  return { app, row }
}

async function getWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const { row } = await findWebhook(services, ctx)
  return { status: 200, body: { data: webhookObject(row) } }
}

async function updateWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const body = jsonBody(ctx)
  const { app, row } = await findWebhook(services, ctx)
  if (!isPlainObject(body)) {
    throw badRequest('The body must be a JSON object.')
  }
  if (body.id !== undefined && body.id !== row.id) {
    throw badRequest('The id of a webhook cannot be changed.', { id: ['cannot be changed'] })
  }
  const current = {
    id: row.id,
    name: row.name,
    webhookURL: row.webhook_url,
    useBasicAuth: row.use_basic_auth,
    ...(row.username !== null ? { username: row.username } : {}),
    ...(row.password !== null ? { password: row.password } : {}),
    enabled: row.enabled,
    ...(row.triggers !== null ? { triggers: row.triggers } : {}),
  }
  const w = checkWebhook({ ...current, ...body })
  const updated = await services.db
    .updateTable('webhooks')
    .set({
      name: w.name,
      webhook_url: w.webhookURL,
      use_basic_auth: w.useBasicAuth,
      username: w.username ?? null,
      password: w.password ?? null,
      enabled: w.enabled,
      triggers: w.triggers ? JSON.stringify(w.triggers) : null,
    })
    .where('app_id', '=', app.id)
    .where('id', '=', row.id)
    .returningAll()
    .executeTakeFirstOrThrow()
  return { status: 200, body: { data: webhookObject(updated) } }
}

async function deleteWebhook(services: SandboxServices, ctx: RequestContext): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const { app, row } = await findWebhook(services, ctx)
  await services.db.deleteFrom('webhooks').where('app_id', '=', app.id).where('id', '=', row.id).execute()
  return { status: 200, body: { data: { success: true } } }
}

/** The management routes (apps, webhooks). */
export function managementRoutes(services: SandboxServices): Route[] {
  return [
    { method: 'POST', pattern: '/apps', readsBody: true, handler: (ctx) => createApp(services, ctx) },
    { method: 'GET', pattern: '/apps', handler: (ctx) => listApps(services, ctx) },
    { method: 'DELETE', pattern: '/apps/:appId', handler: (ctx) => deleteApp(services, ctx) },
    { method: 'POST', pattern: '/apps/:appId/webhooks', readsBody: true, handler: (ctx) => createWebhook(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/webhooks', handler: (ctx) => listWebhooks(services, ctx) },
    { method: 'GET', pattern: '/apps/:appId/webhooks/:webhookId', handler: (ctx) => getWebhook(services, ctx) },
    { method: 'PUT', pattern: '/apps/:appId/webhooks/:webhookId', readsBody: true, handler: (ctx) => updateWebhook(services, ctx) },
    { method: 'DELETE', pattern: '/apps/:appId/webhooks/:webhookId', handler: (ctx) => deleteWebhook(services, ctx) },
  ]
}
