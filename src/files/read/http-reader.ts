/**
 * The `http` reader: a file's bytes over HTTP(S) with Node's `fetch` (undici). Used for every
 * attachment without a connector locator (its `url`), and by connectors whose files sit behind a
 * URL (Slack's `url_private`, with a token given here).
 *
 * - Resume: `offset > 0` sends `Range: bytes=<offset>-`; a 206 answer starts where its
 *   `Content-Range` says, a 200 answer is the whole file (`start: 0`: the caller restarts). A 416
 *   whose `Content-Range: bytes * /<size>` equals the offset means the spooled part is already the
 *   whole file (an empty body from `offset`); any other 416 is asked again without a range.
 * - `Accept-Encoding: identity`, so `Content-Length` is the file's size; when a server compresses
 *   anyway, the size is left unknown rather than wrong.
 * - Statuses become {@link FileSourceError}s (http-status.ts); a refused or reset connection is
 *   `unavailable` and retryable. An abort through the caller's signal (its stall timer, a stop)
 *   is rethrown as it is, for the caller to name.
 * - Headers given at construction (an `Authorization: Bearer …`) go with every request and are
 *   never logged or put in an error; URLs in errors are {@link shownUrl}s (no query, no user info).
 */
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'

import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../model/files.ts'
import { statusFailure } from './http-status.ts'
import { shownUrl } from './shown-url.ts'

export interface HttpReaderOptions {
  /** Sent with every request (e.g. `authorization`); secrets: never logged, never in an error. */
  readonly headers?: Readonly<Record<string, string>>
}

/** A FileReader whose `ref` is an absolute http(s) URL. */
export function createHttpReader(options: HttpReaderOptions = {}): FileReader {
  const base = { ...options.headers, 'accept-encoding': 'identity' }
  return {
    open: (ref, openOptions = {}) => openUrl(ref, base, openOptions),
  }
}

async function openUrl(url: string, headers: Record<string, string>, options: OpenOptions): Promise<OpenedFile> {
  const shown = shownUrl(url)
  if (!/^https?:\/\//i.test(url)) {
    throw new FileSourceError('missing', `${shown}: not an http(s) URL`, false)
  }
  const offset = options.offset ?? 0
  const res = await request(url, offset > 0 ? { ...headers, range: `bytes=${offset}-` } : headers, shown, options.signal)
  if (res.status === 416) {
    await res.body?.cancel()
    const total = parseTotal(res.headers.get('content-range'))
    if (total !== undefined && total === offset) {
      return { body: Readable.from([]), size: total, start: offset, ...contentType(res) }
    }
    return openUrl(url, headers, { ...options, offset: 0 })
  }
  if (res.status < 200 || res.status > 299) {
    await res.body?.cancel()
    throw statusFailure(res.status, shown, res.headers.get('retry-after'))
  }
  const body = res.body === null ? Readable.from([]) : Readable.fromWeb(res.body as WebReadableStream<Uint8Array>)
  const encoded = (res.headers.get('content-encoding') ?? 'identity').toLowerCase() !== 'identity'
  if (res.status === 206) {
    const range = parseContentRange(res.headers.get('content-range'))
    if (range === undefined) {
      body.destroy()
      throw new FileSourceError('unavailable', `${shown}: a partial answer (206) without a readable Content-Range`, true)
    }
    return { body, start: range.start, ...(range.total === undefined ? {} : { size: range.total }), ...contentType(res) }
  }
  const length = Number(res.headers.get('content-length') ?? Number.NaN)
  return { body, start: 0, ...(encoded || !Number.isSafeInteger(length) ? {} : { size: length }), ...contentType(res) }
}

async function request(url: string, headers: Record<string, string>, shown: string, signal: AbortSignal | undefined): Promise<Response> {
  try {
    return await fetch(url, { headers, redirect: 'follow', ...(signal ? { signal } : {}) })
  } catch (err) {
    if (signal?.aborted) {
      throw signal.reason
    }
    throw new FileSourceError('unavailable', `${shown}: could not reach the source (${networkCode(err)})`, true)
  }
}

/**
 * The network error's code (ECONNREFUSED, ECONNRESET, ENOTFOUND …), else its cause's message when
 * that holds no URL (fetch's own refusals: `bad port` for the ports browsers block).
 */
function networkCode(err: unknown): string {
  const cause = (err as { cause?: { code?: unknown; message?: unknown } }).cause
  if (typeof cause?.code === 'string') {
    return cause.code
  }
  return typeof cause?.message === 'string' && !cause.message.includes('://') ? cause.message : 'network error'
}

function contentType(res: Response): { contentType?: string } {
  const type = res.headers.get('content-type')
  return type === null || type === '' ? {} : { contentType: type }
}

/** `bytes 100-199/1000` → start 100, total 1000; `bytes 100-199/*` → total unknown. */
export function parseContentRange(header: string | null): { start: number; total?: number } | undefined {
  const m = /^bytes\s+(\d+)-(\d+)\/(\d+|\*)$/i.exec(header?.trim() ?? '')
  if (!m) {
    return undefined
  }
  return { start: Number(m[1]), ...(m[3] === '*' ? {} : { total: Number(m[3]) }) }
}

/** `bytes * /1000` (as a 416 answer says it) → 1000. */
function parseTotal(header: string | null): number | undefined {
  const m = /^bytes\s+\*\/(\d+)$/i.exec(header?.trim() ?? '')
  return m ? Number(m[1]) : undefined
}
