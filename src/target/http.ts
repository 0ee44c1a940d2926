/**
 * The HTTP layer shared by the three platform clients: JSON in and out, a timeout per request,
 * typed errors, and the rate-limit headers read in both documented spellings. Credentials stay
 * where they were configured: every URL is checked against the transport rule before it is sent,
 * and redirects are never followed (fetch would carry the `apikey` header to the new address).
 */
import type { z } from 'zod'

import { PlatformError } from './errors.ts'
import { outcomeOfError, reportPlatformRequest, requestsObserved } from './request-observers.ts'
import { ErrorBody } from './schemas.ts'
import { transportProblem } from './transport.ts'

export interface RateLimitInfo {
  /** X-RateLimit-Limit / X-Rate-Limit */
  limit?: number
  /** X-RateLimit-Remaining / X-Rate-Limit-Remaining */
  remaining?: number
  /** X-RateLimit-Reset / X-Rate-Limit-Reset, as epoch milliseconds. */
  resetAtMs?: number
  /** Retry-After, in milliseconds. */
  retryAfterMs?: number
}

function numberHeader(headers: Headers, ...names: string[]): number | undefined {
  for (const name of names) {
    const raw = headers.get(name)
    if (raw === null || raw.trim() === '') {
      continue
    }
    const n = Number(raw)
    if (Number.isFinite(n)) {
      return n
    }
  }
  return undefined
}

/**
 * Reads the rate-limit headers. Two doc versions spell them differently (`X-Rate-Limit-*` and
 * `X-RateLimit-*`, facts §3), so both are read; header names are case-insensitive.
 */
export function readRateLimit(headers: Headers, now: number = Date.now()): RateLimitInfo {
  const info: RateLimitInfo = {}
  const limit = numberHeader(headers, 'x-ratelimit-limit', 'x-rate-limit')
  const remaining = numberHeader(headers, 'x-ratelimit-remaining', 'x-rate-limit-remaining')
  const reset = numberHeader(headers, 'x-ratelimit-reset', 'x-rate-limit-reset')
  if (limit !== undefined) {
    info.limit = limit
  }
  if (remaining !== undefined) {
    info.remaining = remaining
  }
  // Documented as a UNIX timestamp in seconds; tolerate milliseconds.
  if (reset !== undefined) {
    info.resetAtMs = reset > 1e12 ? reset : reset * 1000
  }
  const retryAfter = headers.get('retry-after')
  if (retryAfter !== null) {
    const seconds = Number(retryAfter)
    if (Number.isFinite(seconds)) {
      info.retryAfterMs = Math.max(0, seconds * 1000)
    } else {
      const date = Date.parse(retryAfter)
      if (Number.isFinite(date)) {
        info.retryAfterMs = Math.max(0, date - now)
      }
    }
  }
  if (info.retryAfterMs === undefined && info.resetAtMs !== undefined && info.remaining === 0) {
    info.retryAfterMs = Math.max(0, info.resetAtMs - now)
  }
  return info
}

export interface HttpRequest {
  operation: string
  method: 'GET' | 'POST' | 'PUT' | 'DELETE'
  url: string
  /** Credentials and other headers; never echoed into errors. */
  headers: Record<string, string>
  body?: unknown
  /** A body that is JSON text already: sent as is (instead of `body`). */
  rawBody?: string
  timeoutMs: number
  signal?: AbortSignal
}

export interface HttpResponse<T> {
  status: number
  body: T
  rateLimit: RateLimitInfo
}

/**
 * Sends one request and validates a 2xx body against `schema`; anything else is a {@link PlatformError}.
 * Its endpoint, outcome and time go to the process's request observers (request-observers.ts), if any.
 */
export async function requestJson<S extends z.ZodType>(req: HttpRequest, schema: S): Promise<HttpResponse<z.output<S>>> {
  if (!requestsObserved()) {
    return sendJson(req, schema)
  }
  const t0 = performance.now()
  const seconds = () => (performance.now() - t0) / 1000
  try {
    const res = await sendJson(req, schema)
    reportPlatformRequest({ operation: req.operation, outcome: 'ok', seconds: seconds() })
    return res
  } catch (err) {
    reportPlatformRequest({ operation: req.operation, outcome: outcomeOfError(err), seconds: seconds() })
    throw err
  }
}

async function sendJson<S extends z.ZodType>(req: HttpRequest, schema: S): Promise<HttpResponse<z.output<S>>> {
  checkTransport(req)
  const timeout = AbortSignal.timeout(req.timeoutMs)
  const signal = req.signal ? AbortSignal.any([req.signal, timeout]) : timeout
  const headers: Record<string, string> = { accept: 'application/json', ...req.headers }
  if (req.body !== undefined || req.rawBody !== undefined) {
    headers['content-type'] = 'application/json'
  }
  let res: Response
  try {
    res = await fetch(req.url, {
      method: req.method,
      headers,
      body: req.rawBody ?? (req.body === undefined ? null : JSON.stringify(req.body)),
      signal,
      redirect: 'manual',
    })
  } catch (err) {
    if (req.signal?.aborted) {
      throw req.signal.reason ?? err
    }
    const timedOut = timeout.aborted
    throw new PlatformError({
      operation: req.operation,
      kind: timedOut ? 'timeout' : 'network',
      code: timedOut ? 'TIMEOUT' : 'NETWORK_ERROR',
      message: timedOut ? `timeout after ${req.timeoutMs} ms without an answer` : describeNetworkError(err),
      cause: err,
    })
  }
  if (res.status >= 300 && res.status < 400) {
    throw redirectRefused(req, res)
  }
  const rateLimit = readRateLimit(res.headers)
  let text: string
  try {
    text = await res.text()
  } catch (err) {
    throw new PlatformError({
      operation: req.operation,
      kind: 'network',
      status: res.status,
      code: 'NETWORK_ERROR',
      message: `connection lost while reading the answer: ${describeNetworkError(err)}`,
      cause: err,
    })
  }
  let json: unknown
  try {
    json = text === '' ? undefined : JSON.parse(text)
  } catch {
    json = undefined
  }
  if (!res.ok) {
    const parsed = ErrorBody.safeParse(json)
    const error = parsed.success ? parsed.data.error : undefined
    throw new PlatformError({
      operation: req.operation,
      kind: 'http',
      status: res.status,
      code: error?.code ?? `HTTP_${res.status}`,
      message: error?.message ?? (text.slice(0, 200) || res.statusText),
      ...(error?.devMessage !== undefined ? { devMessage: error.devMessage } : {}),
      ...(error?.details !== undefined ? { details: error.details } : {}),
      ...(rateLimit.retryAfterMs !== undefined ? { retryAfterMs: rateLimit.retryAfterMs } : {}),
    })
  }
  const parsed = schema.safeParse(json)
  if (!parsed.success) {
    const first = parsed.error.issues[0]
    throw new PlatformError({
      operation: req.operation,
      kind: 'invalid-response',
      status: res.status,
      code: 'INVALID_RESPONSE',
      message: `unexpected response body${first ? ` at ${first.path.join('.') || '(root)'}: ${first.message}` : ''}`,
    })
  }
  return { status: res.status, body: parsed.data, rateLimit }
}

/** Refuses, before anything is sent, a URL that would carry credentials over an insecure transport. */
function checkTransport(req: HttpRequest): void {
  let url: URL
  try {
    url = new URL(req.url)
  } catch {
    throw new PlatformError({ operation: req.operation, kind: 'refused', code: 'INVALID_URL', message: 'the request URL is not a valid URL' })
  }
  const problem = transportProblem(url)
  if (problem !== undefined) {
    throw new PlatformError({ operation: req.operation, kind: 'refused', code: 'INSECURE_TRANSPORT', message: problem })
  }
}

/**
 * A 3xx answer. Following it would send the credentials to wherever the Location points, so it is
 * final; the message names the status and the Location's origin (never its path or query).
 */
function redirectRefused(req: HttpRequest, res: Response): PlatformError {
  void res.body?.cancel().catch(() => {})
  const location = res.headers.get('location')
  let where = 'no Location header'
  if (location !== null) {
    try {
      where = `to ${new URL(location, req.url).origin}`
    } catch {
      where = 'to an invalid Location'
    }
  }
  return new PlatformError({
    operation: req.operation,
    kind: 'http',
    status: res.status,
    code: 'REDIRECT_REFUSED',
    message: `the platform answered HTTP ${res.status} (redirect ${where}); redirects are not followed so the credentials stay with the configured address: point the base URL at the final address`,
  })
}

/** Connection failures by their system code, in words an operator searches for. */
const NETWORK_CODES: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ENOTFOUND: 'DNS lookup failed: no such host name',
  EAI_AGAIN: 'DNS lookup failed: the name server did not answer',
  EHOSTUNREACH: 'host unreachable',
  ENETUNREACH: 'network unreachable',
  ETIMEDOUT: 'connection timed out',
  UND_ERR_SOCKET: 'connection closed by the other side',
}

function describeNetworkError(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause
  if (cause?.code) {
    const words = NETWORK_CODES[cause.code]
    const detail = `${cause.code}${cause.message ? `: ${cause.message}` : ''}`
    return words === undefined ? detail : `${words} (${detail})`
  }
  return err instanceof Error ? err.message : String(err)
}
