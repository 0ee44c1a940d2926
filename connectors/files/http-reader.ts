/**
 * A {@link FileReader} over HTTP(S) with an operator's bearer token (Slack's `url_private` with
 * `source.fileToken`): `ref` is the URL, without any credential. The token is sent as
 * `Authorization: Bearer …` to the URL's own origin only — a redirect to another host is
 * followed without it — and it never appears in an error or a log. `Range: bytes=N-` resumes;
 * a 206 starts at the offset, a 200 at 0. The answer is returned as it is (its Content-Type
 * included), so a login page served instead of the file reaches the files lane's checks as
 * `text/html`. Statuses map to causes: 404/410 → `missing`, 401 → `expired-credentials`, 403 →
 * `denied`, 429 → `rate-limited` with `Retry-After`, 5xx and network failures → `unavailable`.
 */
import { Readable } from 'node:stream'
import type { ReadableStream as WebReadableStream } from 'node:stream/web'

import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../src/model/files.ts'
import { totalOfContentRange } from './s3-reader.ts'

/** Redirects followed before the file is refused as `unavailable`. */
const MAX_REDIRECTS = 5

/** `Retry-After` (seconds or an HTTP date) in milliseconds, or undefined. */
export function retryAfterMs(value: string | null, now = Date.now()): number | undefined {
  if (value === null || value.trim() === '') {
    return undefined
  }
  if (/^\d+$/.test(value.trim())) {
    return Number(value.trim()) * 1000
  }
  const at = Date.parse(value)
  return Number.isNaN(at) ? undefined : Math.max(0, at - now)
}

/** A URL as it may be shown: no user info, no query (a query may carry a token). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url)
    return `${u.protocol}//${u.host}${u.pathname}`
  } catch {
    return '(not a URL)'
  }
}

/** Maps a non-success status to the files lane's causes. */
export function httpFailure(where: string, status: number, retryAfter: string | null): FileSourceError {
  if (status === 404 || status === 410) {
    return new FileSourceError('missing', `${where}: HTTP ${status}, not at the source`, false)
  }
  if (status === 401) {
    return new FileSourceError('expired-credentials', `${where}: HTTP 401, the token is not accepted (expired or revoked?)`, false)
  }
  if (status === 403) {
    return new FileSourceError('denied', `${where}: HTTP 403, the source refused`, false)
  }
  if (status === 429) {
    return new FileSourceError('rate-limited', `${where}: HTTP 429, asked to slow down`, true, retryAfterMs(retryAfter))
  }
  if (status === 416) {
    return new FileSourceError('truncated', `${where}: HTTP 416, the file is shorter than the offset asked for`, false)
  }
  return new FileSourceError('unavailable', `${where}: HTTP ${status}`, status >= 500 || status === 408, retryAfterMs(retryAfter))
}

export interface BearerHttpOptions {
  /** The bearer token; absent: no Authorization header. */
  readonly token?: string
}

/** Reads `http(s)://` refs, sending the token to each URL's own origin only. */
export function bearerHttpReader(options: BearerHttpOptions): FileReader {
  return {
    async open(ref: string, open: OpenOptions = {}): Promise<OpenedFile> {
      const where = shownUrl(ref)
      let url: URL
      try {
        url = new URL(ref)
      } catch {
        throw new FileSourceError('missing', `${JSON.stringify(ref.slice(0, 200))}: not a URL`, false)
      }
      if (url.protocol !== 'https:' && url.protocol !== 'http:') {
        throw new FileSourceError('denied', `${where}: only http(s) URLs are read`, false)
      }
      const origin = url.origin
      let offset = open.offset ?? 0
      for (let hop = 0; hop <= MAX_REDIRECTS; hop++) {
        // The bytes as stored: a compressed transfer would make Content-Length another size.
        const headers: Record<string, string> = { 'accept-encoding': 'identity' }
        if (options.token !== undefined && url.origin === origin) {
          headers.authorization = `Bearer ${options.token}`
        }
        if (offset > 0) {
          headers.range = `bytes=${offset}-`
        }
        let res: Response
        try {
          res = await fetch(url, { headers, redirect: 'manual', signal: open.signal })
        } catch (err) {
          open.signal?.throwIfAborted()
          const why = (err as { cause?: { code?: string } }).cause?.code ?? (err instanceof Error ? err.message : 'failed')
          throw new FileSourceError('unavailable', `${where}: could not be reached (${why})`, true)
        }
        const location = res.headers.get('location')
        if (res.status >= 300 && res.status < 400 && location !== null) {
          await res.body?.cancel()
          url = new URL(location, url)
          continue
        }
        if (res.status === 416 && offset > 0) {
          await res.body?.cancel()
          if (totalOfContentRange(res.headers.get('content-range') ?? undefined) === offset) {
            // A resume after every byte had arrived: nothing more to read.
            return { body: Readable.from([]), size: offset, start: offset }
          }
          // Any other unsatisfiable range: the whole file again.
          offset = 0
          continue
        }
        if (res.status !== 200 && res.status !== 206) {
          await res.body?.cancel()
          throw httpFailure(where, res.status, res.headers.get('retry-after'))
        }
        if (res.body === null) {
          throw new FileSourceError('unavailable', `${where}: HTTP ${res.status} without a body`, true)
        }
        const length = res.headers.get('content-length')
        const partial = res.status === 206
        // A body still sent compressed (Content-Encoding despite `identity`) is decoded by fetch: its length is not the file's.
        const encoded = !/^(identity)?$/i.test(res.headers.get('content-encoding') ?? '')
        const size = partial
          ? totalOfContentRange(res.headers.get('content-range') ?? undefined)
          : length === null || encoded
            ? undefined
            : Number(length)
        return {
          body: Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
          size,
          contentType: res.headers.get('content-type') ?? undefined,
          start: partial ? offset : 0,
        }
      }
      throw new FileSourceError('unavailable', `${where}: more than ${MAX_REDIRECTS} redirects`, false)
    },
  }
}
