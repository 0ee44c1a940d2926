/**
 * The frame of every chat write route: authentication, the app's chat budget, and one request-log
 * entry per authenticated call, whose `endpoint` names the call (`users.update` … `messages.delete`)
 * and whose `items` carry each key the call named (uid, guid, `<guid>_member_<uid>`, message id)
 * with what became of it. So a test proves from what the sandbox *received* that a delta made
 * exactly the expected calls, once each. The route's handler fills in the items it decided on;
 * a call refused as a whole logs every key it named as `refused` (429: `unprocessed`) with the code.
 */
import type { AppInfo } from './app-registry.ts'
import { authenticateApp } from './auth.ts'
import { takeChatSlot } from './chat-caller.ts'
import { header, type HeaderMap, HttpError, jsonBody, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
import type { RequestLogItem } from './request-log.ts'
import type { HttpMethod, Route } from './router.ts'
import { API_VERSIONS, type SandboxServices } from './sandbox-services.ts'
import type { WebhookEvent } from './webhook-dispatcher.ts'

/** The request log's names of the chat writes (the issue 13 design's list). */
export const CHAT_WRITE_ENDPOINTS = [
  'users.update',
  'users.deactivate',
  'users.reactivate',
  'groups.update',
  'groups.delete',
  'members.add',
  'members.scope',
  'members.kick',
  'members.ban',
  'members.unban',
  'messages.update',
  'messages.delete',
] as const
export type ChatWriteEndpoint = (typeof CHAT_WRITE_ENDPOINTS)[number]

/** What a write handler works with. */
export interface ChatWrite {
  readonly app: AppInfo
  /** Per key, what the call did; the handler pushes one per key it decided on. */
  readonly items: RequestLogItem[]
  /** Webhook events to deliver once the call succeeded. */
  readonly events: WebhookEvent[]
  /** When the call is handled, in UNIX seconds. */
  readonly nowSeconds: number
}

export type ChatWriteHandler = (ctx: RequestContext, w: ChatWrite) => Promise<{ status: number; body: unknown }>

export interface ChatWriteSpec {
  readonly method: HttpMethod
  /** Below `/apps/:appId/<version>/`. */
  readonly path: string
  readonly endpoint: ChatWriteEndpoint
  /** The keys the request names, for the log of a call refused as a whole (best effort: [] when unreadable). */
  readonly keysOf: (ctx: RequestContext) => string[]
  readonly handler: ChatWriteHandler
}

/** The id of a path parameter as the platform reads it (ids are lowercased). */
export function idParam(ctx: RequestContext, name: string): string {
  return (ctx.params[name] ?? '').toLowerCase()
}

/** The keys a request names; none when its body cannot be read. */
function safeKeys(spec: ChatWriteSpec, ctx: RequestContext): string[] {
  try {
    return spec.keysOf(ctx)
  } catch {
    return []
  }
}

async function handle(services: SandboxServices, spec: ChatWriteSpec, ctx: RequestContext): Promise<Reply> {
  const { app } = authenticateApp(ctx, services.registry)
  const started = Date.now()
  const w: ChatWrite = { app, items: [], events: [], nowSeconds: Math.floor(started / 1000) }
  let headers: HeaderMap = {}
  let status = 500
  let code: string | null = 'ERR_EXCEPTION'
  try {
    headers = takeChatSlot(services, app)
    const reply = await spec.handler(ctx, w)
    status = reply.status
    code = null
    services.webhooks.dispatch(app, w.events)
    return { status: reply.status, body: reply.body, headers }
  } catch (err) {
    if (!(err instanceof HttpError)) {
      throw err
    }
    status = err.status
    code = err.code
    if (w.items.length === 0) {
      w.items.push(
        ...safeKeys(spec, ctx).map((key) => ({ key, result: status === 429 ? ('unprocessed' as const) : ('refused' as const), code: err.code })),
      )
    }
    throw err.withHeaders(headers)
  } finally {
    services.requestLog.add({
      appId: app.id,
      receivedAtMs: ctx.receivedAtMs,
      method: ctx.method,
      path: ctx.path,
      endpoint: spec.endpoint,
      itemCount: w.items.length,
      status,
      code,
      fault: null,
      committed: w.items.filter((i) => i.result === 'applied').length,
      latencyMs: 0,
      durationMs: Date.now() - started,
      items: w.items,
    })
  }
}

/** The routes of `specs` under both documented prefixes. */
export function chatWriteRoutes(services: SandboxServices, specs: readonly ChatWriteSpec[]): Route[] {
  return API_VERSIONS.flatMap((v) =>
    specs.map((spec): Route => ({
      method: spec.method,
      pattern: `/apps/:appId/${v}/${spec.path}`,
      readsBody: spec.method !== 'GET',
      handler: (ctx) => handle(services, spec, ctx),
    })),
  )
}

/**
 * The JSON body of a write, checked against `schema`: not JSON → 400/415 as every route; a field
 * breaking the documented rules → 400 `ERR_BAD_REQUEST` with the field in `details`. An empty
 * body reads as `{}` when `emptyIsObject` (a DELETE whose body is optional).
 */
export function writeBody<T>(
  ctx: RequestContext,
  schema: { safeParse(v: unknown): { success: true; data: T } | { success: false; error: { issues: readonly ZodIssueLike[] } } },
  emptyIsObject = false,
): T {
  const raw = emptyIsObject && ctx.body.toString('utf8').trim() === '' ? {} : jsonBody(ctx)
  const r = schema.safeParse(raw)
  if (!r.success) {
    const details = zodDetails(r.error.issues)
    const fields = Object.keys(details).join(', ')
    throw new HttpError(400, 'ERR_BAD_REQUEST', `The request body is not valid: ${fields}.`, { details })
  }
  return r.data
}

type ZodIssueLike = { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }

/** The `onBehalfOf` header (documented for group and message calls), lowercased; undefined when absent. */
export function onBehalfOfHeader(ctx: RequestContext): string | undefined {
  const v = header(ctx, 'onbehalfof')
  return v === undefined || v === '' ? undefined : v.toLowerCase()
}
