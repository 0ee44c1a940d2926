/**
 * An S3-compatible server in the test process: s3rver (its files in a temporary directory, its
 * logging silenced) behind a small HTTP front of our own that
 *
 * - checks SigV4 signatures against the test secret (s3rver only checks the access key id), so
 *   a wrong secret access key is refused with `SignatureDoesNotMatch` as on AWS;
 * - keeps a request log (method, key, query, status) of everything the store received, so tests
 *   prove "copied once" from the store's own side ({@link S3TestServer.writesOf});
 * - can answer a status itself instead of the store (`fail`), a store refusing writes, or hold
 *   chosen requests unanswered (`hold`), to kill a client in the middle of an upload.
 *
 * The buckets are created up front. Anonymous GETs reach s3rver unchecked, so
 * `<origin>/<bucket>/` serves as a public base URL in tests (path-style addressing).
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import S3rver from 's3rver'

import { testSecret } from './secrets.ts'
import { sigV4Problem } from './sigv4-check.ts'

export interface S3Request {
  readonly method: string
  readonly bucket: string
  /** The object key (decoded), '' for bucket-level requests. */
  readonly key: string
  readonly query: Readonly<Record<string, string>>
  readonly status: number
}

export interface S3TestServer {
  /** `http://127.0.0.1:<port>`: the endpoint (path-style). */
  readonly endpoint: string
  readonly accessKeyId: string
  /** A marked test secret (secrets.ts): it must never appear in an error, outcome or log. */
  readonly secretAccessKey: string
  readonly requests: readonly S3Request[]
  /** Where s3rver keeps the objects and their metadata (tests scan it for leaked secrets). */
  readonly directory: string
  /** A status to answer instead of the store (a refusing or failing store); undefined forwards. */
  fail: ((method: string, key: string) => number | undefined) | undefined
  /** Requests this matches get no answer at all (a client killed while waiting); they count in `held`. */
  hold: ((method: string, key: string, query: Readonly<Record<string, string>>) => boolean) | undefined
  /** Requests held so far. */
  readonly held: number
  /** Completed writes of `key`: PutObject and CompleteMultipartUpload answered 200. */
  writesOf(bucket: string, key: string): number
  /** `<endpoint>/<bucket>`: the bucket's public base URL. */
  publicBase(bucket: string): string
  close(): Promise<void>
}

export async function startS3Server(buckets: readonly string[] = ['files']): Promise<S3TestServer> {
  const directory = mkdtempSync(join(tmpdir(), 'cf-s3rver-'))
  const s3 = new S3rver({ directory, silent: true, configureBuckets: buckets.map((name) => ({ name })) })
  await s3.configureBuckets()
  const handle = s3.callback()
  const requests: S3Request[] = []
  let heldCount = 0
  const secretAccessKey = testSecret('s3secret')
  const server = createServer((req, res) => {
    const method = req.method ?? 'GET'
    const url = new URL(req.url ?? '/', 'http://localhost')
    const [, bucket = '', ...rest] = url.pathname.split('/')
    const entry = { method, bucket: decodeURIComponent(bucket), key: decodeURIComponent(rest.join('/')), query: Object.fromEntries(url.searchParams) }
    res.on('finish', () => requests.push({ ...entry, status: res.statusCode }))
    if (front.hold?.(method, entry.key, entry.query)) {
      heldCount++
      req.resume()
      return
    }
    const failWith = front.fail?.(method, entry.key)
    const problem = sigV4Problem(method, req.url ?? '/', req.headers, secretAccessKey)
    if (failWith !== undefined || problem !== undefined) {
      req.resume()
      const code = failWith === undefined ? 'SignatureDoesNotMatch' : failWith === 403 ? 'AccessDenied' : 'ServiceUnavailable'
      res.writeHead(failWith ?? 403, { 'content-type': 'application/xml' })
      res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${problem ?? 'refused by the test'}</Message></Error>`)
      return
    }
    handle(req, res)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const front: S3TestServer = {
    endpoint,
    accessKeyId: 'S3RVER',
    secretAccessKey,
    requests,
    directory,
    fail: undefined,
    hold: undefined,
    get held() {
      return heldCount
    },
    writesOf: (b, key) =>
      requests.filter(
        (r) =>
          r.bucket === b &&
          r.key === key &&
          r.status === 200 &&
          ((r.method === 'PUT' && r.query.uploadId === undefined && r.query.partNumber === undefined) ||
            (r.method === 'POST' && r.query.uploadId !== undefined)),
      ).length,
    publicBase: (b) => `${endpoint}/${b}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => {
          rmSync(directory, { recursive: true, force: true })
          resolve()
        })
      }),
  }
  return front
}
