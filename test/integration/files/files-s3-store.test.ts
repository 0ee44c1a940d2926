/**
 * The S3-compatible store against a real S3 server in the process (s3rver behind a SigV4-checking
 * front, test/helpers/s3-server.ts): small and multipart writes with their type and SHA-256,
 * `stat`, the public URL serving the same bytes, and `check()` refusing wrong credentials, a
 * missing bucket and an unreachable endpoint with a configuration error that names the store and
 * never the secret.
 */
import { createHash, randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ChatferryError } from '../../../src/errors.ts'
import { FilesSchema } from '../../../src/files/config.ts'
import { openFileStore } from '../../../src/files/store/open-store.ts'
import { StoreUnavailableError } from '../../../src/files/store/store-errors.ts'
import { type S3TestServer, startS3Server } from '../../helpers/s3-server.ts'

let s3: S3TestServer
const dir = mkdtempSync(join(tmpdir(), 'cf-s3-store-'))

beforeAll(async () => {
  s3 = await startS3Server(['files'])
})
afterAll(async () => {
  await s3.close()
})

/** A store configuration as a job's `files:` section gives it (defaults applied by the schema). */
function storeConfig(over: Record<string, unknown> = {}) {
  const files = FilesSchema.parse({
    mode: 'rehost',
    store: {
      kind: 's3',
      bucket: 'files',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      prefix: 'chat',
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      publicBaseUrl: s3.publicBase('files'),
      multipartThresholdBytes: 5 * 1024 * 1024,
      ...over,
    },
  })
  return files.store!
}

function sha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex')
}

describe('the S3 store', () => {
  it('writes a small file in one PutObject with its type and SHA-256, stats it, and serves it at its public URL', async () => {
    const store = openFileStore(storeConfig(), { client: { maxAttempts: 1 } })
    const bytes = Buffer.from('hello, store\n')
    const path = join(dir, 'small.txt')
    writeFileSync(path, bytes)
    expect(await store.stat('sha256/aa/small.txt')).toBeUndefined()
    await store.put('sha256/aa/small.txt', path, { size: bytes.length, contentType: 'text/plain', sha256: sha(bytes) })
    expect(await store.stat('sha256/aa/small.txt')).toEqual({ size: bytes.length })
    expect(s3.writesOf('files', 'chat/sha256/aa/small.txt')).toBe(1)
    const url = store.publicUrl('sha256/aa/small.txt')
    expect(url).toBe(`${s3.publicBase('files')}/chat/sha256/aa/small.txt`)
    const res = await fetch(url)
    expect(Buffer.from(await res.arrayBuffer())).toEqual(bytes)
    expect(res.headers.get('content-type')).toBe('text/plain')
    expect(res.headers.get('x-amz-meta-sha256')).toBe(sha(bytes))
    await store.close?.()
  })

  it('writes a file over the threshold as a multipart upload', async () => {
    const store = openFileStore(storeConfig(), { client: { maxAttempts: 1 } })
    const bytes = randomBytes(18 * 1024 * 1024)
    const path = join(dir, 'large.bin')
    writeFileSync(path, bytes)
    const key = `sha256/${sha(bytes).slice(0, 2)}/${sha(bytes)}.bin`
    await store.put(key, path, { size: bytes.length, contentType: 'application/octet-stream', sha256: sha(bytes) })
    const parts = s3.requests.filter((r) => r.key === `chat/${key}` && r.method === 'PUT' && r.query.partNumber !== undefined)
    expect(parts.length).toBeGreaterThanOrEqual(2)
    expect(s3.writesOf('files', `chat/${key}`)).toBe(1)
    expect(await store.stat(key)).toEqual({ size: bytes.length })
    const res = await fetch(store.publicUrl(key))
    expect(sha(Buffer.from(await res.arrayBuffer()))).toBe(sha(bytes))
    const client = new S3Client({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
    })
    const head = await client.send(new HeadObjectCommand({ Bucket: 'files', Key: `chat/${key}` }))
    expect(head.Metadata?.sha256).toBe(sha(bytes))
    client.destroy()
    await store.close?.()
  })

  it('check() passes with good credentials and leaves no probe object behind', async () => {
    const store = openFileStore(storeConfig(), { client: { maxAttempts: 1 } })
    await store.check()
    expect(await store.stat('.chatferry-check')).toBeUndefined()
    await store.close?.()
  })

  const refused: [string, () => Record<string, unknown>, RegExp][] = [
    ['a wrong secret access key', () => ({ secretAccessKey: 'cf-test-secret-wrongsecret_0123' }), /secret access key does not match/],
    ['an unknown access key id', () => ({ accessKeyId: 'NOT-A-KEY' }), /does not know the access key id/],
    ['a missing bucket', () => ({ bucket: 'no-such-bucket' }), /bucket does not exist/],
    ['an unreachable endpoint', () => ({ endpoint: 'http://127.0.0.1:9' }), /cannot reach the endpoint \(ECONNREFUSED\)/],
  ]
  it.each(refused)('check() with %s is a configuration error naming the store, without the secret', async (_what, over, cause) => {
    const config = storeConfig(over())
    const store = openFileStore(config, { client: { maxAttempts: 1 } })
    const err = await store.check().then(
      () => undefined,
      (e: unknown) => e,
    )
    expect(err).toBeInstanceOf(ChatferryError)
    expect((err as ChatferryError).code).toBe('CONFIG_INVALID')
    expect((err as Error).message).toMatch(cause)
    expect((err as Error).message).toContain(`s3://${config.kind === 's3' ? config.bucket : ''}/chat/`)
    expect(JSON.stringify({ message: (err as Error).message, stack: (err as Error).stack })).not.toMatch(/cf-test-secret-/)
    await store.close?.()
  })

  it('a store that refuses writes while copying throws StoreUnavailableError, not a configuration error', async () => {
    const store = openFileStore(storeConfig(), { client: { maxAttempts: 1 } })
    const path = join(dir, 'refused.txt')
    writeFileSync(path, 'x')
    s3.fail = (method) => (method === 'PUT' ? 503 : undefined)
    try {
      const err = await store
        .put('sha256/bb/refused.txt', path, { size: 1, contentType: 'text/plain', sha256: sha(Buffer.from('x')) })
        .catch((e: unknown) => e)
      expect(err).toBeInstanceOf(StoreUnavailableError)
      expect((err as Error).message).toMatch(/unavailable: writing sha256\/bb\/refused.txt/)
      expect((err as Error).message).not.toMatch(/cf-test-secret-/)
    } finally {
      s3.fail = undefined
      await store.close?.()
    }
  })
})
