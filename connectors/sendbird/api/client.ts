/**
 * The Platform API v3 client of the Sendbird connector: GET only (the connector never writes),
 * paced at the configured GET rate (the plan's documented per-app limit: one request at a time,
 * each start 1/`requestsPerSecond` after the one before), and retried with backoff on 429 (waiting at least
 * what `X-RateLimit-RetryAfter`/`Retry-After` asks), 5xx, timeouts and resets. The token goes in
 * the `Api-Token` header only; no message, error or log holds it (errors quote Sendbird's
 * `message` with the token cut out, in case an answer echoed it).
 */
import pRetry, { AbortError } from 'p-retry'

import { ChatferryError } from '../../../src/errors.ts'
import type { JsonObject } from '../../../src/model/records.ts'
import type { SendbirdApiConfig } from '../config.ts'

/** Sendbird's "resource not found" (HTTP 400 or 404, code 400201): a channel deleted since it was listed. */
export class SendbirdNotFound extends Error {
  override readonly name = 'SendbirdNotFound'
}

/** A retryable answer (429, 5xx) or failure (timeout, reset), with how long the source asked to wait. */
class Retryable extends Error {
  readonly waitMs: number
  constructor(message: string, waitMs = 0) {
    super(message)
    this.waitMs = waitMs
  }
}

export interface ClientStats {
  requests: number
  rateLimited: number
  failed5xx: number
}

/** Seconds from `X-RateLimit-RetryAfter` or `Retry-After`, in ms (capped at a minute). */
function retryAfterMs(res: Response): number {
  const raw = res.headers.get('x-ratelimit-retryafter') ?? res.headers.get('retry-after')
  const s = raw === null ? NaN : Number(raw)
  return Number.isFinite(s) && s > 0 ? Math.min(60_000, s * 1000) : 1000
}

export class SendbirdClient {
  readonly baseUrl: string
  readonly stats: ClientStats = { requests: 0, rateLimited: 0, failed5xx: 0 }
  readonly #config: SendbirdApiConfig
  /** When the next request may start (epoch ms): requests are spaced 1/requestsPerSecond apart. */
  #nextAt = 0
  readonly #gapMs: number
  /** The ends of the last `#perWindow` requests started (pending while in flight). */
  readonly #ends: Promise<number>[] = []
  /** Turns are taken one at a time. */
  #turn: Promise<void> = Promise.resolve()
  readonly #perWindow: number

  constructor(config: SendbirdApiConfig) {
    this.#config = config
    this.baseUrl = (config.baseUrl ?? `https://api-${config.appId}.sendbird.com`).replace(/\/+$/, '')
    // 1% under the limit: a clock tick of rounding never makes it N+1 in a second at the source.
    this.#gapMs = 1000 / (config.requestsPerSecond * 0.99)
    this.#perWindow = Math.max(1, Math.floor(config.requestsPerSecond))
  }

  /** What to call the source in messages: the application and host, never the token. */
  get label(): string {
    return `Sendbird application ${this.#config.appId} at ${this.baseUrl}`
  }

  #clean(text: string): string {
    return text.split(this.#config.apiToken).join('[api token]').slice(0, 300)
  }

  /** `GET /v3/<path>?<query>`: the answer's JSON object. */
  async get(path: string, query: Record<string, string | number | boolean | undefined>, signal?: AbortSignal): Promise<JsonObject> {
    const url = new URL(`${this.baseUrl}/v3/${path}`)
    for (const [k, v] of Object.entries(query)) {
      if (v !== undefined) {
        url.searchParams.set(k, String(v))
      }
    }
    const where = `${this.label}: GET /v3/${path.split('?')[0]}`
    try {
      return await pRetry(() => this.#paced(() => this.#once(url, where, signal), signal), {
        retries: this.#config.retries,
        minTimeout: 500,
        maxTimeout: 30_000,
        randomize: true,
        ...(signal !== undefined ? { signal } : {}),
        onFailedAttempt: async ({ error }) => {
          if (error instanceof Retryable && error.waitMs > 0) {
            await new Promise((r) => setTimeout(r, error.waitMs))
          }
        },
      })
    } catch (err) {
      if (err instanceof Retryable) {
        throw new ChatferryError('SOURCE_UNAVAILABLE', `${where} still failed after ${this.#config.retries + 1} attempts: ${err.message}`)
      }
      throw err
    }
  }

  /**
   * Runs `request` at its turn: each start 1/requestsPerSecond after the one before, and never
   * more than `requestsPerSecond` started within a second of the *end* of an earlier one (a
   * request still in flight counts as not ended): a request reaches the source before it ends, so
   * however late one arrives, the source never counts more than its limit in any one-second window,
   * even with a channel read ahead (read-ahead.ts) in flight beside the current one.
   */
  async #paced<T>(request: () => Promise<T>, signal: AbortSignal | undefined): Promise<T> {
    const slot = this.#turn.then(() => this.#slot(signal))
    this.#turn = slot.then(
      () => undefined,
      () => undefined,
    )
    const ended = await slot
    try {
      return await request()
    } finally {
      ended(Date.now())
    }
  }

  /** Waits for the next start (turns are taken one at a time); returns how to record its end. */
  async #slot(signal: AbortSignal | undefined): Promise<(at: number) => void> {
    let at = Math.max(Date.now(), this.#nextAt)
    if (this.#ends.length >= this.#perWindow) {
      at = Math.max(at, (await (this.#ends[0] as Promise<number>)) + 1000)
    }
    const wait = at - Date.now()
    if (wait > 0) {
      await new Promise((r) => setTimeout(r, wait))
    }
    signal?.throwIfAborted()
    this.#nextAt = Math.max(Date.now(), at) + this.#gapMs
    let ended!: (at: number) => void
    this.#ends.push(new Promise<number>((r) => (ended = r)))
    if (this.#ends.length > this.#perWindow) {
      this.#ends.shift()
    }
    return ended
  }

  async #once(url: URL, where: string, signal: AbortSignal | undefined): Promise<JsonObject> {
    this.stats.requests++
    const timeout = AbortSignal.timeout(this.#config.timeoutMs)
    let res: Response
    try {
      res = await fetch(url, {
        headers: { 'Api-Token': this.#config.apiToken, Accept: 'application/json' },
        signal: signal !== undefined ? AbortSignal.any([signal, timeout]) : timeout,
      })
    } catch (err) {
      if (signal?.aborted) {
        throw new AbortError(signal.reason instanceof Error ? signal.reason : new Error('aborted'))
      }
      throw new Retryable(
        `no answer (${(err as Error).name === 'TimeoutError' ? `timed out after ${this.#config.timeoutMs} ms` : this.#clean(String((err as Error).cause ?? err))})`,
      )
    }
    const text = await res.text()
    let body: unknown
    try {
      body = JSON.parse(text)
    } catch {
      body = undefined
    }
    const o = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as JsonObject) : undefined
    if (res.ok && o !== undefined && o.error !== true) {
      return o
    }
    const code = typeof o?.code === 'number' ? o.code : undefined
    const said = `HTTP ${res.status}${code !== undefined ? `, code ${code}` : ''}${typeof o?.message === 'string' ? `: ${this.#clean(o.message)}` : ''}`
    if (res.status === 429 || code === 500910) {
      this.stats.rateLimited++
      throw new Retryable(`rate limited (${said})`, retryAfterMs(res))
    }
    if (res.status >= 500 || (res.ok && o === undefined)) {
      this.stats.failed5xx++
      throw new Retryable(res.ok ? 'an answer that is not JSON' : said)
    }
    if (code === 400201 || res.status === 404) {
      throw new AbortError(new SendbirdNotFound(`${where}: not found (${said})`))
    }
    if (res.status === 401 || res.status === 403 || code === 400401 || code === 400402 || code === 400403) {
      throw new AbortError(
        new ChatferryError(
          'SOURCE_INVALID',
          `${where}: Sendbird refused the API token (${said}); set source.api.apiToken (\${SENDBIRD_API_TOKEN}) to a valid master or secondary token of this application`,
        ),
      )
    }
    throw new AbortError(new ChatferryError('SOURCE_INVALID', `${where}: Sendbird refused the request (${said})`))
  }
}
