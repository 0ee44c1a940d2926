/**
 * The reader of media messages' files for the files lane: a Media Content Service URL
 * (`…/v1/Services/IS…/Media/ME…/Content`) opened with the account's Basic credentials; Twilio
 * answers with a redirect to a short-lived signed URL, which is followed without them. Only URLs
 * on the configured Media Content Service host are opened (credentials go nowhere else).
 */
import { Readable } from 'node:stream'

import { type FileReader, FileSourceError, type OpenedFile } from '../../src/model/files.ts'

export function twilioFileReader(o: { mediaBaseUrl: string; accountSid: string; authToken: string }): FileReader {
  const origin = new URL(o.mediaBaseUrl).origin
  const auth = `Basic ${Buffer.from(`${o.accountSid}:${o.authToken}`).toString('base64')}`
  return {
    async open(ref, options = {}): Promise<OpenedFile> {
      const url = new URL(ref)
      if (url.origin !== origin) {
        throw new FileSourceError('denied', `not on the Media Content Service ${origin}: ${url.host}`, false)
      }
      const range = options.offset ? { Range: `bytes=${options.offset}-` } : {}
      const first = await fetch(url, {
        headers: { Authorization: auth, ...range },
        redirect: 'manual',
        ...(options.signal ? { signal: options.signal } : {}),
      })
      const location = first.headers.get('location')
      const res =
        first.status >= 300 && first.status < 400 && location
          ? await fetch(new URL(location, url), { headers: range, ...(options.signal ? { signal: options.signal } : {}) })
          : first
      if (res.status === 401 || res.status === 403) {
        throw new FileSourceError(res.url.startsWith(origin) ? 'expired-credentials' : 'denied', `HTTP ${res.status} for ${url.pathname}`, false)
      }
      if (res.status === 404) {
        throw new FileSourceError('missing', `HTTP 404 for ${url.pathname}`, false)
      }
      if (res.status === 429 || res.status >= 500) {
        throw new FileSourceError(
          res.status === 429 ? 'rate-limited' : 'unavailable',
          `HTTP ${res.status} for ${url.pathname}`,
          true,
          Number(res.headers.get('retry-after')) * 1000 || undefined,
        )
      }
      if (!res.ok || res.body === null) {
        throw new FileSourceError('unavailable', `HTTP ${res.status} for ${url.pathname}`, false)
      }
      const partial = res.status === 206
      const total = partial ? Number(res.headers.get('content-range')?.split('/')[1]) : Number(res.headers.get('content-length'))
      return {
        body: Readable.fromWeb(res.body as never),
        ...(Number.isFinite(total) && total > 0 ? { size: total } : {}),
        ...(res.headers.get('content-type') ? { contentType: res.headers.get('content-type') as string } : {}),
        start: partial ? (options.offset ?? 0) : 0,
      }
    },
  }
}
