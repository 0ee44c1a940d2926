/**
 * The frame of every chat write route: authentication, the app's chat budget, and one request-log
 * entry per authenticated call, whose `endpoint` names the call (`users.update` … `messages.delete`)
 * and whose `items` carry each key the call named (uid, guid, `<guid>_member_<uid>`, message id)
 * with what became of it. So a test proves from what the sandbox *received* that a delta made
 * exactly the expected calls, once each. The route's handler fills in the items it decided on;
 * a call refused as a whole logs every key it named as `refused` (429: `unprocessed`) with the code.
 * The app's `chatFaults` can answer a 429 under the limit, drop the connection before the call, or
 * apply it and drop the connection without an answer (logged with status null and the fault).
 */
import type { AppInfo } from './app-registry.ts'
import { authenticateApp } from './auth.ts'
import { takeChatSlot } from './chat-caller.ts'
import type { FaultKind } from './fault-injector.ts'
import { header, HttpError, jsonBody, type Reply, type RequestContext, zodDetails } from './http-kit.ts'
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

/** The chat-fault dice of one call (their own random source, seeded like the import faults). */
function chatFault(services: SandboxServices, app: AppInfo): FaultKind | undefined {
  const { chatFaults, faults } = app.settings
  const settings = {
    ...chatFaults,
    partialCommit500: 0,
    partialCommitShape: 'subset' as const,
    latencyMs: { min: 0, max: 0 },
    ...(faults.seed !== undefined ? { seed: faults.seed } : {}),
  }
  return services.faults.plan(`chat:${app.id}`, settings).fault
}

interface Outcome {
  status: number | null
  code: string | null
  fault: FaultKind | null
}

/** Runs the call: the budget, the `chatFaults`, the handler; fills `out` with what to log. */
async function run(services: SandboxServices, spec: ChatWriteSpec, ctx: RequestContext, w: ChatWrite, out: Outcome): Promise<Reply> {
  const fault = chatFault(services, w.app)
  if (fault === 'extra429') {
    out.fault = fault
    throw new HttpError(429, 'ERR_TOO_MANY_REQUESTS', 'Too many requests. Please retry after 1 seconds.', { headers: { 'Retry-After': 1 } })
  }
  const headers = takeChatSlot(services, w.app)
  if (fault === 'dropBeforeCommit') {
    out.fault = fault
    out.status = null
    out.code = null
    w.items.push(...safeKeys(spec, ctx).map((key) => ({ key, result: 'unprocessed' as const })))
    return { drop: true }
  }
  const reply = await spec.handler(ctx, w).catch((err: unknown) => {
    throw err instanceof HttpError ? err.withHeaders(headers) : err
  })
  services.webhooks.dispatch(w.app, w.events)
  out.code = null
  if (fault === 'dropAfterCommit') {
    out.fault = fault
    out.status = null
    return { drop: true }
  }
  out.status = reply.status
  return { status: reply.status, body: reply.body, headers }
}

async function handle(services: SandboxServices, spec: ChatWriteSpec, ctx: RequestContext): Promise<Reply> {
  const { app } = authenticateApp(ctx, services.registry)
  const started = Date.now()
  const w: ChatWrite = { app, items: [], events: [], nowSeconds: Math.floor(started / 1000) }
  const out: Outcome = { status: 500, code: 'ERR_EXCEPTION', fault: null }
  try {
    return await run(services, spec, ctx, w, out)
  } catch (err) {
    if (err instanceof HttpError) {
      out.status = err.status
      out.code = err.code
      if (w.items.length === 0) {
        const result = err.status === 429 ? ('unprocessed' as const) : ('refused' as const)
        w.items.push(...safeKeys(spec, ctx).map((key) => ({ key, result, code: err.code })))
      }
    }
    throw err
  } finally {
    services.requestLog.add({
      appId: app.id,
      receivedAtMs: ctx.receivedAtMs,
      method: ctx.method,
      path: ctx.path,
      endpoint: spec.endpoint,
      itemCount: w.items.length,
      status: out.status,
      code: out.code,
      fault: out.fault,
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
