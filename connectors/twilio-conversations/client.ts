/**
 * The Twilio REST client of the connector: read-only GETs with HTTP Basic authentication (Account
 * SID and auth token from the environment, never logged), one request at a time at
 * `requestsPerSecond` (p-queue), 429 (Twilio error 20429: too many concurrent requests) and 5xx
 * retried with backoff (honouring `Retry-After`), paging by `meta.next_page_url` — followed only on
 * the configured host, so the credentials never go elsewhere. A 401/403 is SOURCE_INVALID (exit 2)
 * with Twilio's code and message.
 */
import PQueue from 'p-queue'

import { ChatferryError } from '../../src/errors.ts'

export interface TwilioPage {
  readonly items: readonly Record<string, unknown>[]
  readonly next: string | null
}

const sleep = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const t = setTimeout(resolve, ms)
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t)
        reject(signal.reason as Error)
      },
      { once: true },
    )
  })

function errorOf(status: number, body: string): string {
  try {
    const e = JSON.parse(body) as { code?: unknown; message?: unknown }
    return `HTTP ${status}, Twilio error ${String(e.code)}: ${String(e.message).slice(0, 200)}`
  } catch {
    return `HTTP ${status}`
  }
}

export class TwilioClient {
  readonly #base: URL
  readonly #auth: string
  readonly #queue: PQueue
  readonly #maxRetries: number

  constructor(o: { baseUrl: string; accountSid: string; authToken: string; requestsPerSecond: number; maxRetries: number }) {
    this.#base = new URL(o.baseUrl)
    this.#auth = `Basic ${Buffer.from(`${o.accountSid}:${o.authToken}`).toString('base64')}`
    this.#queue = new PQueue({ concurrency: 1, intervalCap: 1, interval: Math.max(1, Math.round(1000 / o.requestsPerSecond)) })
    this.#maxRetries = o.maxRetries
  }

  /** The URL of `path` (absolute URLs only on the configured origin). */
  url(path: string): URL {
    const u = new URL(path, this.#base)
    if (u.origin !== this.#base.origin) {
      throw new ChatferryError('SOURCE_INVALID', `Twilio answered with a page on another host (${u.host}); not followed`)
    }
    return u
  }

  /** One page of a list resource: its items under `key`, and the next page's URL. */
  async page(path: string, key: string, signal?: AbortSignal): Promise<TwilioPage> {
    const body = await this.get(this.url(path), signal)
    const items = Array.isArray(body[key]) ? (body[key] as Record<string, unknown>[]) : []
    const meta = (body.meta ?? {}) as { next_page_url?: unknown }
    return { items, next: typeof meta.next_page_url === 'string' ? meta.next_page_url : null }
  }

  async get(url: URL, signal?: AbortSignal): Promise<Record<string, unknown>> {
    const where = `Twilio GET ${url.pathname}`
    for (let attempt = 0; ; attempt++) {
      let res: Response
      try {
        res = await this.#queue.add(() =>
          fetch(url, {
            headers: { Authorization: this.#auth, Accept: 'application/json' },
            signal: signal ? AbortSignal.any([signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000),
          }),
        )
      } catch (err) {
        if (signal?.aborted) {
          throw err
        }
        if (attempt >= this.#maxRetries) {
          throw new ChatferryError(
            'SOURCE_UNAVAILABLE',
            `${where}: cannot reach ${url.host} after ${attempt + 1} attempts: ${(err as Error).message}`,
            { cause: err },
          )
        }
        await sleep(Math.min(500 * 2 ** attempt, 30_000), signal)
        continue
      }
      const text = await res.text()
      if (res.ok) {
        return JSON.parse(text) as Record<string, unknown>
      }
      if (res.status === 401 || res.status === 403) {
        throw new ChatferryError(
          'SOURCE_INVALID',
          `${where}: Twilio refused the credentials (${errorOf(res.status, text)}); check the Account SID and auth token in the environment`,
        )
      }
      if (res.status !== 429 && res.status < 500) {
        throw new ChatferryError('SOURCE_INVALID', `${where}: ${errorOf(res.status, text)}`)
      }
      if (attempt >= this.#maxRetries) {
        throw new ChatferryError('SOURCE_UNAVAILABLE', `${where}: still ${errorOf(res.status, text)} after ${attempt + 1} attempts`)
      }
      const after = Number(res.headers.get('retry-after'))
      await sleep(
        Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 60_000) : Math.min(500 * 2 ** attempt, 30_000) * (0.5 + Math.random() / 2),
        signal,
      )
    }
  }

  close(): void {
    this.#queue.clear()
  }
}
