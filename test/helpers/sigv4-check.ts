/**
 * Checks an AWS Signature Version 4 `Authorization` header against a known secret, as a real S3
 * server does. s3rver checks only that the access key id exists (its V4 signature check is not
 * implemented), so the test store runs this in front of it: a wrong secret access key then gets
 * the `SignatureDoesNotMatch` answer AWS gives. Written from the published algorithm (canonical
 * request → string to sign → HMAC chain); the payload hash is the `x-amz-content-sha256` header,
 * which the S3 client always sends.
 */
import { createHash, createHmac } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'

const AUTH = /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/

/** `undefined` when the request is signed with `secret`, else why not. Unsigned requests are not checked here. */
export function sigV4Problem(method: string, rawUrl: string, headers: IncomingHttpHeaders, secret: string): string | undefined {
  const auth = headers.authorization
  if (auth === undefined) {
    return undefined
  }
  const m = AUTH.exec(auth)
  if (!m) {
    return 'not a SigV4 Authorization header'
  }
  const [, , date, region, service, signedHeaders, signature] = m as unknown as string[]
  const amzDate = String(headers['x-amz-date'] ?? '')
  const [path, query = ''] = rawUrl.split('?', 2) as [string, string?]
  const canonicalHeaders = signedHeaders!
    .split(';')
    .map(
      (h) =>
        `${h}:${String(headers[h] ?? '')
          .trim()
          .replace(/\s+/g, ' ')}\n`,
    )
    .join('')
  const canonicalRequest = [method, path, canonicalQuery(query), canonicalHeaders, signedHeaders, String(headers['x-amz-content-sha256'] ?? '')].join(
    '\n',
  )
  const scope = `${date}/${region}/${service}/aws4_request`
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest)].join('\n')
  let key: Buffer = hmac(`AWS4${secret}`, date!)
  for (const part of [region!, service!, 'aws4_request']) {
    key = hmac(key, part)
  }
  return hmac(key, stringToSign).toString('hex') === signature ? undefined : 'the signature does not match'
}

function canonicalQuery(query: string): string {
  return query
    .split('&')
    .filter((p) => p !== '')
    .map((p) => {
      const [k = '', v = ''] = p.split('=', 2)
      return [rfc3986(decodeURIComponent(k.replace(/\+/g, ' '))), rfc3986(decodeURIComponent(v.replace(/\+/g, ' ')))] as const
    })
    .sort(([ak, av], [bk, bv]) => (ak === bk ? (av < bv ? -1 : av > bv ? 1 : 0) : ak < bk ? -1 : 1))
    .map(([k, v]) => `${k}=${v}`)
    .join('&')
}

function rfc3986(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex')
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data).digest()
}
