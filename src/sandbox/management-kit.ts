/**
 * What the management routes share (management-routes.ts for apps and webhooks,
 * management-team-routes.ts for extensions and team members): the app a path names, the 400
 * answer, body parsing, and the request log entry of each management call.
 */
import type { z } from 'zod'

import type { AppInfo } from './app-registry.ts'
import { authenticateManagement } from './auth.ts'
import { HttpError, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
import type { SandboxServices } from './sandbox-services.ts'

export function badRequest(message: string, details?: Record<string, string[]>): HttpError {
  return new HttpError(400, 'ERR_BAD_REQUEST', message, details ? { details } : {})
}

/**
 * The app a management path names. A deleted (archived) app is not found here: 404 with the
 * documented `ERR_APP_ARCHIVED` (the management interface answers 404 for a deleted app, as the
 * independent emulator of the published interface does; the app interfaces keep their 403).
 */
export function appOf(services: SandboxServices, ctx: RequestContext): AppInfo {
  const appId = ctx.params.appId ?? ''
  const app = services.registry.get(appId)
  if (!app) {
    if (services.registry.archivedUntil(appId) !== undefined) {
      throw new HttpError(404, 'ERR_APP_ARCHIVED', `The app ${appId} has been archived and will be permanently deleted after 30 days.`)
    }
    throw new HttpError(404, 'ERR_APP_NOT_FOUND', `The app ${appId} does not exist or has been deleted.`)
  }
  return app
}

export function parseWith<S extends z.ZodType>(schema: S, input: unknown, what: string): z.output<S> {
  const parsed = schema.safeParse(input)
  if (!parsed.success) {
    throw badRequest(`The ${what} is invalid.`, zodDetails(parsed.error.issues))
  }
  return parsed.data
}

/** The request log's endpoint names of management calls on an app. */
export type ManagementEndpoint = 'apps' | 'webhooks' | 'webhook-triggers' | 'extensions' | 'collaborators'

/**
 * Runs a management operation on one app for an authenticated caller and an existing app, and
 * records it in the request log (no items), refused or not, so a test can prove what reached the
 * sandbox.
 */
export async function logged(
  services: SandboxServices,
  ctx: RequestContext,
  endpoint: ManagementEndpoint,
  work: (app: AppInfo) => Promise<Reply>,
): Promise<Reply> {
  authenticateManagement(ctx, services.management)
  const app = appOf(services, ctx)
  const entry = {
    appId: app.id,
    receivedAtMs: ctx.receivedAtMs,
    method: ctx.method,
    path: ctx.path,
    endpoint,
    itemCount: null,
    fault: null,
    committed: 0,
    latencyMs: 0,
    items: null,
  }
  try {
    const reply = await work(app)
    services.requestLog.add({ ...entry, status: 'status' in reply ? reply.status : null, code: null, durationMs: Date.now() - ctx.receivedAtMs })
    return reply
  } catch (err) {
    const status = err instanceof HttpError ? err.status : 500
    const code = err instanceof HttpError ? err.code : 'ERR_EXCEPTION'
    services.requestLog.add({ ...entry, status, code, durationMs: Date.now() - ctx.receivedAtMs })
    throw err
  }
}
