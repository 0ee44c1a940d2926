/**
 * A {@link FileReader} over an S3-compatible bucket (a Mattermost, Zulip or Rocket.Chat server's
 * own file store): `ref` is the key under the configured prefix. GetObject with `Range: bytes=N-`
 * resumes from an offset; the body streams (memory bounded whatever the size). S3's errors map to
 * the files lane's causes: NoSuchKey → `missing`, AccessDenied → `denied`, an expired session
 * token → `expired-credentials`, SlowDown/503 → `rate-limited` (retryable), 5xx and network
 * failures → `unavailable` (retryable). Messages name the bucket and key, never a credential.
 */
import { createRequire } from 'node:module'
import { Readable } from 'node:stream'

import type * as S3 from '@aws-sdk/client-s3'

import { type FileReader, FileSourceError, type OpenedFile, type OpenOptions } from '../../src/model/files.ts'
import { refProblem } from './safe-path.ts'
import type { S3Files } from './settings.ts'

/** The host the files lane paces an S3 source by: the endpoint's, or AWS's regional one. */
export function s3Host(s3: S3Files): string {
  return s3.endpoint === undefined ? `s3.${s3.region}.amazonaws.com` : new URL(s3.endpoint).host
}

/** The object key of `ref`: the prefix and the ref joined by one `/` (as the servers join them). */
export function s3Key(prefix: string, ref: string): string {
  const p = prefix.replace(/^\/+|\/+$/g, '')
  return p === '' ? ref : `${p}/${ref}`
}

/** `bytes 100-199/200` → 200 (undefined when the total is `*` or absent). */
export function totalOfContentRange(range: string | undefined): number | undefined {
  const m = /\/(\d+)\s*$/.exec(range ?? '')
  return m === null ? undefined : Number(m[1])
}

interface S3ErrorLike {
  readonly name?: string
  readonly Code?: string
  readonly $metadata?: { readonly httpStatusCode?: number }
  readonly $retryable?: unknown
  readonly message?: string
}

/** Maps a GetObject failure to the files lane's causes. */
export function s3Failure(where: string, err: unknown): FileSourceError {
  const e = (err ?? {}) as S3ErrorLike
  const code = e.Code ?? e.name ?? ''
  const status = e.$metadata?.httpStatusCode
  if (code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchBucket' || status === 404) {
    return new FileSourceError('missing', `${where}: no such object${code === 'NoSuchBucket' ? ' (the bucket does not exist)' : ''}`, false)
  }
  if (code === 'ExpiredToken' || code === 'TokenRefreshRequired') {
    return new FileSourceError('expired-credentials', `${where}: the S3 credentials have expired (${code})`, false)
  }
  if (code === 'AccessDenied' || code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch' || status === 403 || status === 401) {
    return new FileSourceError('denied', `${where}: the S3 server refused to read it (${code || status})`, false)
  }
  if (code === 'InvalidRange' || status === 416) {
    return new FileSourceError('truncated', `${where}: the object is shorter than the offset asked for`, false)
  }
  if (code === 'SlowDown' || status === 503 || status === 429) {
    return new FileSourceError('rate-limited', `${where}: the S3 server asked to slow down (${code || status})`, true)
  }
  if (code === 'AbortError') {
    return new FileSourceError('unavailable', `${where}: aborted`, true)
  }
  const what = status === undefined ? code || e.message || 'no answer' : `HTTP ${status}${code === '' ? '' : ` ${code}`}`
  return new FileSourceError('unavailable', `${where}: the S3 server failed (${what})`, true)
}

/** Reads objects of one bucket. The client is made once and released by `close()`. */
export function s3ObjectReader(s3: S3Files): FileReader {
  // Required here, not imported: the SDK costs a third of a second of CPU that a run without S3 never needs.
  const { GetObjectCommand, S3Client } = createRequire(import.meta.url)('@aws-sdk/client-s3') as typeof S3
  const client = new S3Client({
    region: s3.region,
    endpoint: s3.endpoint,
    forcePathStyle: s3.forcePathStyle,
    credentials:
      s3.accessKeyId === undefined || s3.secretAccessKey === undefined
        ? undefined
        : { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    maxAttempts: 1,
    // What every S3-compatible server answers correctly; the files lane hashes the bytes itself.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  })
  return {
    async open(ref: string, options: OpenOptions = {}): Promise<OpenedFile> {
      const problem = refProblem(ref)
      if (problem !== undefined) {
        throw new FileSourceError('denied', `${JSON.stringify(ref)}: ${problem}`, false)
      }
      const key = s3Key(s3.prefix, ref)
      const where = `s3://${s3.bucket}/${key}`
      const get = (from: number) =>
        client.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key, Range: from > 0 ? `bytes=${from}-` : undefined }), {
          abortSignal: options.signal,
        })
      let offset = options.offset ?? 0
      let out
      try {
        out = await get(offset)
      } catch (err) {
        const failure = s3Failure(where, err)
        if (failure.fileCause !== 'truncated' || offset === 0) {
          throw failure
        }
        // An offset at (or past) the end, e.g. a resume after every byte had arrived: the whole object again.
        offset = 0
        try {
          out = await get(0)
        } catch (again) {
          throw s3Failure(where, again)
        }
      }
      if (!(out.Body instanceof Readable)) {
        throw new FileSourceError('unavailable', `${where}: the S3 answer had no body`, true)
      }
      const ranged = out.ContentRange !== undefined
      const size = ranged ? totalOfContentRange(out.ContentRange) : out.ContentLength
      return { body: out.Body, size, contentType: out.ContentType, start: ranged ? offset : 0 }
    },
    close(): Promise<void> {
      client.destroy()
      return Promise.resolve()
    },
  }
}
