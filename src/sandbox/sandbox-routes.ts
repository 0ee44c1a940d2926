/**
 * Sandbox-only endpoints (no platform counterpart), behind the management credentials:
 * `GET|PUT /sandbox/apps/:appId/settings` (limits, choices and faults of one app),
 * `GET /sandbox/apps/:appId/requests` (the data-import request log),
 * `GET /sandbox/apps/:appId/webhook-deliveries` (the webhook delivery log) and
 * `DELETE /sandbox/apps/:appId/rate-limit` (forget the requests counted so far).
 */
import { z } from 'zod'

import type { AppInfo } from './app-registry.ts'
import { authenticateManagement } from './auth.ts'
import { HttpError, intParam, jsonBody, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
import type { Route } from './router.ts'
import type { SandboxServices } from './sandbox-services.ts'
import type { SandboxDb } from './sandbox-store.ts'

function appOf(services: SandboxServices, ctx: RequestContext): AppInfo {
  authenticateManagement(ctx, services.management)
  const appId = ctx.params.appId ?? ''
  const app = services.registry.get(appId)
  if (!app) {
    throw new HttpError(404, 'ERR_APP_NOT_FOUND', `The app ${appId} does not exist or has been deleted.`)
  }
  return app
}

/** Changes an app's settings; also restarts its fault RNG when the seed was given. */
export async function updateAppSettings(services: SandboxServices, appId: string, patch: unknown) {
  const settings = await services.registry.updateSettings(appId, patch)
  const faults = (patch as { faults?: { seed?: unknown } } | undefined)?.faults
  if (faults !== undefined && 'seed' in faults) {
    services.faults.reset(appId)
  }
  return settings
}

/** One logged webhook delivery. */
export interface DeliveryLogEntry {
  id: number
  webhookId: string
  trigger: string
  status: string
  httpStatus: number | null
  attempts: number
  /** When each attempt started (epoch ms), oldest first. */
  attemptsAtMs: number[]
  lastError: string | null
  createdAtMs: number
  finishedAtMs: number | null
  payload: unknown
}

/** The delivery log of an app, oldest first. */
export async function listDeliveries(db: SandboxDb, appId: string): Promise<DeliveryLogEntry[]> {
  const rows = await db.selectFrom('webhook_deliveries').selectAll().where('app_id', '=', appId).orderBy('id').execute()
  return rows.map((r) => ({
    id: Number(r.id),
    webhookId: r.webhook_id,
    trigger: r.trigger,
    status: r.status,
    httpStatus: r.http_status,
    attempts: r.attempts,
    attemptsAtMs: Array.isArray(r.attempts_at_ms) ? (r.attempts_at_ms as number[]) : [],
    lastError: r.last_error,
    createdAtMs: Number(r.created_at_ms),
    finishedAtMs: r.finished_at_ms === null ? null : Number(r.finished_at_ms),
    payload: r.payload,
  }))
}

/** The sandbox-only routes. */
export function sandboxRoutes(services: SandboxServices): Route[] {
  return [
    {
      method: 'GET',
      pattern: '/sandbox/apps/:appId/settings',
      handler: async (ctx) => ({ status: 200, body: { data: appOf(services, ctx).settings } }),
    },
    {
      method: 'PUT',
      pattern: '/sandbox/apps/:appId/settings',
      readsBody: true,
      handler: async (ctx): Promise<Reply> => {
        const app = appOf(services, ctx)
        const patch = jsonBody(ctx)
        try {
          return { status: 200, body: { data: await updateAppSettings(services, app.id, patch) } }
        } catch (err) {
          if (err instanceof z.ZodError) {
            throw new HttpError(400, 'ERR_BAD_REQUEST', 'The settings are invalid.', { details: zodDetails(err.issues) })
          }
          throw err
        }
      },
    },
    {
      method: 'GET',
      pattern: '/sandbox/apps/:appId/requests',
      handler: async (ctx) => {
        const app = appOf(services, ctx)
        const after = intParam(ctx.query, 'after', 0, 0, Number.MAX_SAFE_INTEGER)
        const limit = intParam(ctx.query, 'limit', 10_000, 1, 100_000)
        return { status: 200, body: { data: await services.requestLog.list(app.id, { after, limit }) } }
      },
    },
    {
      method: 'GET',
      pattern: '/sandbox/apps/:appId/webhook-deliveries',
      handler: async (ctx) => ({ status: 200, body: { data: await listDeliveries(services.db, appOf(services, ctx).id) } }),
    },
    {
      method: 'DELETE',
      pattern: '/sandbox/apps/:appId/rate-limit',
      handler: async (ctx) => {
        const app = appOf(services, ctx)
        services.limiter.reset(app.id)
        services.limiter.reset(`chat:${app.id}`)
        return { status: 200, body: { data: { success: true } } }
      },
    },
  ]
}
