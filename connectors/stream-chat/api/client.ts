/**
 * The Stream Chat REST client of the connector: read-only calls (query users, query channels,
 * channel messages, replies, members), each endpoint paced at its documented per-minute limit
 * (p-queue), `X-RateLimit-Remaining: 0` waited out until `X-RateLimit-Reset`, 429 and 5xx (and
 * network failures) retried with backoff up to `maxRetries`. A 401/403 is a credentials problem:
 * SOURCE_INVALID (exit 2) naming Stream's error code and message, never the key or secret.
 */
import PQueue from 'p-queue'

import { ChatferryError } from '../../../src/errors.ts'
import type { StreamCredentials } from './auth.ts'

/** The endpoints called, each with its own documented limit (requests per minute). */
export const STREAM_ENDPOINTS = ['queryUsers', 'queryChannels', 'getChannel', 'getReplies', 'queryMembers'] as const
export type StreamEndpoint = (typeof STREAM_ENDPOINTS)[number]

export interface StreamClientOptions {
  readonly baseUrl: string
  readonly credentials: StreamCredentials
  /** Requests per minute per endpoint. */
  readonly limits: Readonly<Record<StreamEndpoint, number>>
  readonly maxRetries: number
  /** Backoff base for 5xx and network failures (ms). @default 500 */
  readonly backoffMs?: number
  readonly timeoutMs?: number
}

/** What the client saw: for tests and the bench. */
export interface StreamClientStats {
  requests: number
  rateLimited: number
  retried: number
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason as Error)
      return
    }
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal?.reason as Error)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })

/** Stream's error body `{code, message, StatusCode}` in a few words. */
function errorOf(status: number, body: string): string {
  try {
    const e = JSON.parse(body) as { code?: unknown; message?: unknown }
    return `HTTP ${status}, Stream code ${String(e.code)}: ${String(e.message).slice(0, 200)}`
  } catch {
    return `HTTP ${status}`
  }
}

/** Milliseconds until the window resets (`X-RateLimit-Reset`, epoch seconds) or `Retry-After` says. */
function waitOf(headers: Headers, fallbackMs: number): number {
  const reset = Number(headers.get('x-ratelimit-reset'))
  const after = Number(headers.get('retry-after'))
  const byReset = Number.isFinite(reset) && reset > 0 ? reset * 1000 - Date.now() : Number.NaN
  const byAfter = Number.isFinite(after) && after > 0 ? after * 1000 : Number.NaN
  const ms = Number.isNaN(byReset) ? (Number.isNaN(byAfter) ? fallbackMs : byAfter) : byReset
  return Math.min(Math.max(ms, 50), 120_000)
}

export class StreamClient {
  readonly stats: StreamClientStats = { requests: 0, rateLimited: 0, retried: 0 }
  readonly #o: StreamClientOptions
  readonly #queues: Record<StreamEndpoint, PQueue>
  /** Until when an endpoint's window is spent (a 429 or `Remaining: 0`). */
  readonly #blockedUntil = new Map<StreamEndpoint, number>()

  constructor(o: StreamClientOptions) {
    this.#o = o
    const queue = (perMinute: number) => new PQueue({ concurrency: 1, intervalCap: 1, interval: Math.max(1, Math.floor(60_000 / perMinute)) })
    this.#queues = Object.fromEntries(STREAM_ENDPOINTS.map((e) => [e, queue(o.limits[e])])) as Record<StreamEndpoint, PQueue>
  }

  /** One JSON call, paced and retried. `query` values that are objects are sent as JSON (`payload`). */
  async call<T>(
    endpoint: StreamEndpoint,
    method: 'GET' | 'POST',
    path: string,
    o: { query?: Record<string, unknown>; body?: unknown; signal?: AbortSignal } = {},
  ): Promise<T> {
    const url = new URL(path.replace(/^\//, ''), this.#o.baseUrl.endsWith('/') ? this.#o.baseUrl : `${this.#o.baseUrl}/`)
    url.searchParams.set('api_key', this.#o.credentials.apiKey)
    for (const [k, v] of Object.entries(o.query ?? {})) {
      url.searchParams.set(k, typeof v === 'string' ? v : JSON.stringify(v))
    }
    const where = `Stream Chat ${method} ${url.pathname}`
    for (let attempt = 0; ; attempt++) {
      const blocked = (this.#blockedUntil.get(endpoint) ?? 0) - Date.now()
      if (blocked > 0) {
        await sleep(blocked, o.signal)
      }
      let res: Response
      try {
        res = await this.#queues[endpoint].add(() => this.#fetch(url, method, o.body, o.signal), { signal: o.signal } as never)
      } catch (err) {
        if (o.signal?.aborted) {
          throw err
        }
        if (attempt >= this.#o.maxRetries) {
          throw new ChatferryError(
            'SOURCE_UNAVAILABLE',
            `${where}: cannot reach ${url.host} after ${attempt + 1} attempts: ${(err as Error).message}`,
            { cause: err },
          )
        }
        this.stats.retried++
        await sleep(this.#backoff(attempt), o.signal)
        continue
      }
      const text = await res.text()
      if (res.headers.get('x-ratelimit-remaining') === '0') {
        this.#blockedUntil.set(endpoint, Date.now() + waitOf(res.headers, 1000))
      }
      if (res.ok) {
        return JSON.parse(text) as T
      }
      if (res.status === 401 || res.status === 403) {
        throw new ChatferryError(
          'SOURCE_INVALID',
          `${where}: Stream refused the credentials (${errorOf(res.status, text)}); check the API key and secret in the environment`,
        )
      }
      const retryable = res.status === 429 || res.status >= 500
      if (!retryable) {
        throw new ChatferryError('SOURCE_INVALID', `${where}: ${errorOf(res.status, text)}`)
      }
      if (attempt >= this.#o.maxRetries) {
        throw new ChatferryError('SOURCE_UNAVAILABLE', `${where}: still ${errorOf(res.status, text)} after ${attempt + 1} attempts`)
      }
      if (res.status === 429) {
        this.stats.rateLimited++
        this.#blockedUntil.set(endpoint, Date.now() + waitOf(res.headers, this.#backoff(attempt)))
      } else {
        this.stats.retried++
        await sleep(this.#backoff(attempt), o.signal)
      }
    }
  }

  #backoff(attempt: number): number {
    const base = this.#o.backoffMs ?? 500
    return Math.min(base * 2 ** attempt, 30_000) * (0.5 + Math.random() / 2)
  }

  async #fetch(url: URL, method: string, body: unknown, signal: AbortSignal | undefined): Promise<Response> {
    this.stats.requests++
    const timeout = AbortSignal.timeout(this.#o.timeoutMs ?? 30_000)
    return fetch(url, {
      method,
      headers: {
        Authorization: this.#o.credentials.token,
        'stream-auth-type': 'jwt',
        'Content-Type': 'application/json',
        'Accept-Encoding': 'gzip',
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    })
  }

  close(): void {
    for (const q of Object.values(this.#queues)) {
      q.clear()
    }
  }
}
