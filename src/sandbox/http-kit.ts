/**
 * The small HTTP toolkit of the sandbox: the error type every handler throws, the reply type every
 * handler returns, JSON body parsing and query-parameter parsing with the platform's error shape.
 */
import type { IncomingMessage } from 'node:http'

/** `source` of every error body the sandbox writes (the platform writes e.g. `chat-api`). */
export const ERROR_SOURCE = 'sandbox'

/** Headers as the handlers set them; numbers are written as decimal strings. */
export type HeaderMap = Record<string, string | number>

/** What a handler answers: a JSON body with a status, or "drop the connection without answering". */
export type Reply = { readonly status: number; readonly body?: unknown; readonly headers?: HeaderMap } | { readonly drop: true }

/**
 * An answer with the platform's documented error body
 * `{error: {message, devMessage, source, code, details?}}`.
 */
export class HttpError extends Error {
  readonly status: number
  readonly code: string
  readonly devMessage: string
  readonly details: Record<string, string[]> | undefined
  readonly headers: HeaderMap

  constructor(
    status: number,
    code: string,
    message: string,
    extra: { devMessage?: string; details?: Record<string, string[]>; headers?: HeaderMap } = {},
  ) {
    super(message)
    this.name = 'HttpError'
    this.status = status
    this.code = code
    this.devMessage = extra.devMessage ?? message
    this.details = extra.details
    this.headers = extra.headers ?? {}
  }

  /** The same error with more headers (rate-limit headers on data-import errors). */
  withHeaders(headers: HeaderMap): HttpError {
    return new HttpError(this.status, this.code, this.message, {
      devMessage: this.devMessage,
      ...(this.details ? { details: this.details } : {}),
      headers: { ...headers, ...this.headers },
    })
  }

  toReply(): Reply {
    return { status: this.status, body: errorBody(this.code, this.message, this.devMessage, this.details), headers: this.headers }
  }
}

/** The documented error body `{error: {message, devMessage, source, code, details?}}`. */
export function errorBody(code: string, message: string, devMessage: string = message, details?: Record<string, string[]>) {
  return { error: { message, devMessage, source: ERROR_SOURCE, code, ...(details ? { details } : {}) } }
}

/** What the router hands a handler. */
export interface RequestContext {
  readonly req: IncomingMessage
  readonly method: string
  readonly path: string
  readonly query: URLSearchParams
  readonly params: Readonly<Record<string, string>>
  /** The whole body (already read, at most the body cap). */
  readonly body: Buffer
  /** Date.now() when the request arrived. */
  readonly receivedAtMs: number
}

/** A header's value (node lowercases names, so lookups are case-insensitive), first one if repeated. */
export function header(ctx: RequestContext, name: string): string | undefined {
  const v = ctx.req.headers[name.toLowerCase()]
  return Array.isArray(v) ? v[0] : v
}

/**
 * The JSON body of a POST/PUT. Documented: requests are JSON (`Content-Type: application/json`).
 * Anything else is 415, unparsable JSON is 400 `ERR_BAD_REQUEST`.
 */
export function jsonBody(ctx: RequestContext): unknown {
  const type = (header(ctx, 'content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? ''
  if (type !== 'application/json' && !/^application\/[a-z0-9.+-]*\+json$/.test(type)) {
    throw new HttpError(
      415,
      'ERR_BAD_REQUEST',
      `The request body must be JSON (Content-Type: application/json), got ${type === '' ? 'no content type' : type}.`,
    )
  }
  const text = ctx.body.toString('utf8')
  if (text.trim() === '') {
    throw new HttpError(400, 'ERR_BAD_REQUEST', 'The request body is empty; a JSON object was expected.')
  }
  try {
    return JSON.parse(text)
  } catch (err) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', 'The request body is not valid JSON.', { devMessage: (err as Error).message })
  }
}

/** A JSON object (not an array, not null). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
}

/** An integer query parameter within [min, max]; absent gives `fallback`; anything else is 400. */
export function intParam(query: URLSearchParams, name: string, fallback: number, min: number, max: number): number {
  const raw = query.get(name)
  if (raw === null || raw === '') {
    return fallback
  }
  const n = Number(raw)
  if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n) || n < min || n > max) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', `The parameter ${name} must be an integer from ${min} to ${max}, got ${JSON.stringify(raw)}.`, {
      details: { [name]: [`must be an integer from ${min} to ${max}`] },
    })
  }
  return n
}

/** An optional integer query parameter (absent → undefined). */
export function optionalIntParam(query: URLSearchParams, name: string, min: number, max: number): number | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') {
    return undefined
  }
  return intParam(query, name, 0, min, max)
}

/** A query parameter that must be one of `values` when present. */
export function enumParam<T extends string>(query: URLSearchParams, name: string, values: readonly T[]): T | undefined {
  const raw = query.get(name)
  if (raw === null || raw === '') {
    return undefined
  }
  if (!(values as readonly string[]).includes(raw)) {
    throw new HttpError(400, 'ERR_BAD_REQUEST', `The parameter ${name} must be one of ${values.join(', ')}, got ${JSON.stringify(raw)}.`, {
      details: { [name]: [`must be one of ${values.join(', ')}`] },
    })
  }
  return raw as T
}

/** A boolean query parameter (`true`/`1` or `false`/`0`). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  const raw = query.get(name)
  return raw === 'true' || raw === '1'
}

/** Turns zod issues into the documented `details` map: field path → messages. */
export function zodDetails(
  issues: readonly { path: readonly PropertyKey[]; message: string; code?: string; keys?: readonly string[] }[],
): Record<string, string[]> {
  const details: Record<string, string[]> = {}
  const add = (field: string, message: string) => (details[field] ??= []).push(message)
  for (const issue of issues) {
    const path = issue.path.map(String).join('.')
    if (issue.code === 'unrecognized_keys' && issue.keys) {
      for (const key of issue.keys) {
        add(path === '' ? key : `${path}.${key}`, 'is not a field of this object')
      }
    } else {
      add(path === '' ? '(item)' : path, issue.message)
    }
  }
  return details
}
