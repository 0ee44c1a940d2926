/**
 * copyFile against real servers: a local HTTP file host that misbehaves on request
 * (test/helpers/file-host.ts) → the http reader → spool → checks → the S3 store (s3rver behind a
 * SigV4-checking front with a request log, test/helpers/s3-server.ts). Proves: a good file is
 * stored once with its SHA-256 and served back at its public URL; the same bytes again are not
 * uploaded again; an expired token's login page, a truncated body, a 404, a file over the limit
 * fail with their cause; a 429 storm is waited out (Retry-After); a stall and a killed process's
 * `.part` resume with a Range; a host that ignores ranges restarts; a refusing store throws
 * StoreUnavailableError and keeps the bytes; no credential appears in any outcome.
 */
import { createHash, randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'

import { FilesSchema } from '../../../src/files/config.ts'
import { type CopyDeps, copyFile, spoolPath } from '../../../src/files/copy/copy-file.ts'
import type { CopyOutcome, FileToCopy } from '../../../src/files/copy/copy-outcome.ts'
import { createHostPacer } from '../../../src/files/pace/host-pacer.ts'
import { createHttpReader } from '../../../src/files/read/http-reader.ts'
import { openFileStore } from '../../../src/files/store/open-store.ts'
import { StoreUnavailableError } from '../../../src/files/store/store-errors.ts'
import type { FileStore } from '../../../src/model/files.ts'
import { type FileHost, startFileHost } from '../../helpers/file-host.ts'
import { type S3TestServer, startS3Server } from '../../helpers/s3-server.ts'
import { testSecret } from '../../helpers/secrets.ts'

let host: FileHost
let s3: S3TestServer
let store: FileStore
let spoolDir: string
const outcomes: CopyOutcome[] = []
const TOKEN = testSecret('filetoken')

beforeAll(async () => {
  host = await startFileHost()
  s3 = await startS3Server(['files'])
  const files = FilesSchema.parse({
    mode: 'rehost',
    store: {
      kind: 's3',
      bucket: 'files',
      endpoint: s3.endpoint,
      forcePathStyle: true,
      accessKeyId: s3.accessKeyId,
      secretAccessKey: s3.secretAccessKey,
      publicBaseUrl: s3.publicBase('files'),
      multipartThresholdBytes: 5 * 1024 * 1024,
    },
  })
  store = openFileStore(files.store!, { client: { maxAttempts: 1 } })
  await store.check()
})
afterAll(async () => {
  // No credential in any outcome of this file (reasons included).
  const all = JSON.stringify(outcomes)
  expect(all).not.toContain(TOKEN)
  expect(all).not.toContain(s3.secretAccessKey)
  expect(all).not.toMatch(/cf-test-secret-/)
  // Nor in the store: no object or metadata file holds the source's token.
  const stored = readdirSync(s3.directory, { recursive: true, withFileTypes: true }).filter((e) => e.isFile())
  expect(stored.length).toBeGreaterThan(10)
  expect(stored.filter((e) => readFileSync(join(e.parentPath, e.name)).includes(TOKEN)).map((e) => e.name)).toEqual([])
  await store.close?.()
  await s3.close()
  await host.close()
})
beforeEach(() => {
  spoolDir = mkdtempSync(join(tmpdir(), 'cf-spool-'))
})

const pacer = createHostPacer({ perHost: { concurrency: 4, requestsPerSecond: 1000 } })

function deps(over: Partial<CopyDeps> = {}): CopyDeps {
  return {
    reader: createHttpReader({ headers: { authorization: `Bearer ${TOKEN}` } }),
    store,
    spoolDir,
    limits: { maxBytes: 8 * 1024 * 1024, stallTimeoutMs: 2000, attempts: 3 },
    pacer,
    backoff: { minTimeoutMs: 10, maxTimeoutMs: 50, maxRetryAfterMs: 10_000 },
    ...over,
  }
}

let ids = 0
function fileAt(path: string, over: Partial<FileToCopy> = {}): FileToCopy {
  const url = new URL(host.url(path))
  return { id: `f${++ids}`, locator: { reader: 'http', ref: url.toString(), host: url.host }, name: path.split('/').pop()!, ...over }
}

async function copy(file: FileToCopy, d: CopyDeps = deps()): Promise<CopyOutcome> {
  const outcome = await copyFile(file, d)
  outcomes.push(outcome)
  return outcome
}

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex')
/** A PNG file-type sniffs as image/png: signature, IHDR, one IDAT chunk of `n` random bytes, IEND. */
function png(n: number): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const length = Buffer.alloc(4)
    length.writeUInt32BE(data.length)
    return Buffer.concat([length, Buffer.from(type, 'ascii'), data, Buffer.alloc(4)])
  }
  const ihdr = Buffer.from('00000010000000100806000000', 'hex')
  return Buffer.concat([Buffer.from('89504e470d0a1a0a', 'hex'), chunk('IHDR', ihdr), chunk('IDAT', randomBytes(n)), chunk('IEND', Buffer.alloc(0))])
}

describe('copyFile', () => {
  it('stores a good file once under its content key, with its SHA-256, and the public URL serves the same bytes', async () => {
    const body = png(300_000)
    host.files.set('/good/photo.png', { body, type: 'image/png' })
    const out = await copy(fileAt('/good/photo.png', { expectedSize: body.length, expectedType: 'image/png' }))
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body), sniffedType: 'image/png', uploaded: true })
    if (!out.ok) {
      return
    }
    expect(out.storeKey).toBe(`sha256/${sha(body).slice(0, 2)}/${sha(body)}.png`)
    expect(s3.writesOf('files', out.storeKey)).toBe(1)
    const served = await fetch(out.publicUrl)
    expect(sha(Buffer.from(await served.arrayBuffer()))).toBe(sha(body))
    expect(served.headers.get('content-type')).toBe('image/png')
    expect(readdirSync(spoolDir)).toEqual([])
  })

  it('does not upload the same bytes again (another message, another URL, a rerun)', async () => {
    const body = png(50_000)
    host.files.set('/a/shared.png', { body })
    host.files.set('/b/shared-again.png', { body })
    const first = await copy(fileAt('/a/shared.png'))
    const second = await copy(fileAt('/b/shared-again.png'))
    const third = await copy(fileAt('/a/shared.png'))
    expect([first.ok && first.uploaded, second.ok && second.uploaded, third.ok && third.uploaded]).toEqual([true, false, false])
    expect(first.ok && second.ok && first.storeKey === second.storeKey).toBe(true)
    expect(s3.writesOf('files', first.ok ? first.storeKey : '')).toBe(1)
  })

  it('asks the store before the upload only when the bytes may be there unrecorded; none at all when the ledger has them copied', async () => {
    const methodsOf = (key: string) => s3.requests.filter((r) => r.bucket === 'files' && r.key === key).map((r) => r.method)
    // First claim, nothing in doubt: one PUT, no HEAD (the request a direct copy makes).
    const body = png(40_000)
    host.files.set('/once/first.png', { body })
    const asked: [string, number][] = []
    const first = await copy(fileAt('/once/first.png', { mayBeStored: false, copiedUnderKey: async (k, b) => (asked.push([k, b]), false) }))
    expect(first).toMatchObject({ ok: true, uploaded: true })
    const key = first.ok ? first.storeKey : ''
    expect(asked).toEqual([[key, body.length]])
    expect(methodsOf(key)).toEqual(['PUT'])
    // The ledger has these bytes copied under this key: no upload and no request to the store.
    host.files.set('/once/same-bytes.png', { body })
    const deduped = await copy(fileAt('/once/same-bytes.png', { mayBeStored: false, copiedUnderKey: async () => true }))
    expect(deduped).toMatchObject({ ok: true, uploaded: false, storeKey: key, publicUrl: store.publicUrl(key) })
    expect(methodsOf(key)).toEqual(['PUT'])
    // Claimed before (a crash between upload and ledger write): HEAD finds the object, no PUT.
    const again = await copy(fileAt('/once/first.png', { mayBeStored: true, copiedUnderKey: async () => false }))
    expect(again).toMatchObject({ ok: true, uploaded: false, storeKey: key })
    expect(methodsOf(key)).toEqual(['PUT', 'HEAD'])
    expect(s3.writesOf('files', key)).toBe(1)
  })

  it("fails an expired token's login page as expired-credentials, naming the URL without its query", async () => {
    host.files.set('/private/contract.pdf', { body: Buffer.from('%PDF-1.4\n%…\n'), token: 'the-current-token' })
    const out = await copy(withQueryToken('/private/contract.pdf'))
    expect(out).toMatchObject({ ok: false, cause: 'expired-credentials', retryable: false })
    if (out.ok) {
      return
    }
    expect(out.reason).toContain(`http ${host.origin}/private/contract.pdf`)
    expect(out.reason).not.toContain('t=xoxe')
    expect(host.requestsOf('/private/contract.pdf').at(-1)?.authorization).toBe(`Bearer ${TOKEN}`)
    expect(readdirSync(spoolDir)).toEqual([])
  })

  it('fails an HTML page served where an image was expected as html-instead-of-file', async () => {
    host.files.set('/oops/diagram.png', { body: Buffer.from('<!DOCTYPE html><html><body><h1>Moved</h1></body></html>'), type: 'text/html' })
    const out = await copy(fileAt('/oops/diagram.png'))
    expect(out).toMatchObject({ ok: false, cause: 'html-instead-of-file', retryable: false })
  })

  it('fails a body cut short of its Content-Length as truncated after the attempts, keeping the part to resume', async () => {
    const body = randomBytes(400_000)
    host.files.set('/cut/archive.bin', { body, truncateAt: 100_000, ranges: false })
    const file = fileAt('/cut/archive.bin')
    const out = await copy(file, deps({ limits: { maxBytes: 8e6, stallTimeoutMs: 2000, attempts: 3, memoryBytes: 0 } }))
    expect(out).toMatchObject({ ok: false, cause: 'truncated', retryable: true })
    expect(host.requestsOf('/cut/archive.bin')).toHaveLength(3)
    expect(existsSync(spoolPath(spoolDir, file.id))).toBe(true)
  })

  it('fails a 404 as missing at once (not retried)', async () => {
    const out = await copy(fileAt('/nowhere/file.txt'))
    expect(out).toMatchObject({ ok: false, cause: 'missing', retryable: false })
    if (out.ok) {
      return
    }
    expect(out.reason).toContain(`${host.origin}/nowhere/file.txt`)
    expect(host.requestsOf('/nowhere/file.txt')).toHaveLength(1)
  })

  it('waits out a 429 storm as long as Retry-After says, then copies', async () => {
    const body = png(10_000)
    const storm = { status: 429, headers: { 'retry-after': '1' } }
    host.files.set('/busy/picture.png', { body, answers: [storm, storm] })
    const out = await copy(fileAt('/busy/picture.png'))
    expect(out).toMatchObject({ ok: true, sha256: sha(body) })
    const asked = host.requestsOf('/busy/picture.png').map((r) => r.at)
    expect(asked).toHaveLength(3)
    expect(asked[1]! - asked[0]!).toBeGreaterThanOrEqual(950)
    expect(asked[2]! - asked[1]!).toBeGreaterThanOrEqual(950)
  })

  it('gives up on a 429 storm longer than the attempts as rate-limited, retryable, with the wait asked for', async () => {
    const storm = { status: 429, headers: { 'retry-after': '0' } }
    host.files.set('/busy/forever.png', { body: png(10), answers: [storm, storm, storm, { status: 429, headers: { 'retry-after': '3600' } }] })
    const out = await copy(fileAt('/busy/forever.png'), deps({ limits: { maxBytes: 1e6, stallTimeoutMs: 2000, attempts: 4 } }))
    expect(out).toMatchObject({ ok: false, cause: 'rate-limited', retryable: true, retryAfterMs: 3_600_000 })
  })

  it('fails a file announced larger than maxBytes as too-large without reading it', async () => {
    host.files.set('/big/video.mp4', { body: randomBytes(2 * 1024 * 1024) })
    const out = await copy(fileAt('/big/video.mp4'), deps({ limits: { maxBytes: 1024 * 1024, stallTimeoutMs: 2000, attempts: 3 } }))
    expect(out).toMatchObject({ ok: false, cause: 'too-large', retryable: false })
    expect(host.requestsOf('/big/video.mp4')).toHaveLength(1)
    expect(readdirSync(spoolDir)).toEqual([])
  })

  it('stops reading a file without a Content-Length as soon as it passes maxBytes', async () => {
    const body = randomBytes(48 * 1024 * 1024)
    host.files.set('/big/stream.bin', { body, chunked: true })
    const out = await copy(fileAt('/big/stream.bin'), deps({ limits: { maxBytes: 256 * 1024, stallTimeoutMs: 2000, attempts: 3 } }))
    expect(out).toMatchObject({ ok: false, cause: 'too-large', retryable: false })
    await new Promise((r) => setTimeout(r, 200))
    const [req] = host.requestsOf('/big/stream.bin')
    expect(req?.completed).toBe(false)
    expect(req?.sent).toBeLessThan(body.length / 2)
    expect(readdirSync(spoolDir)).toEqual([])
  })

  it('aborts a download that stalls mid-body and resumes it with a Range from where it stopped', async () => {
    const body = randomBytes(1024 * 1024)
    host.files.set('/slow/recording.bin', { body, stallAt: 400 * 1024 })
    const out = await copy(fileAt('/slow/recording.bin'), deps({ limits: { maxBytes: 8e6, stallTimeoutMs: 300, attempts: 3, memoryBytes: 0 } }))
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body) })
    const [first, second] = host.requestsOf('/slow/recording.bin')
    expect(first?.range).toBeUndefined()
    expect(second?.range).toMatch(/^bytes=\d+-$/)
    expect(Number(/=(\d+)-/.exec(second?.range ?? '')?.[1])).toBeGreaterThan(0)
    expect(second?.sent).toBeLessThan(body.length)
  })

  it('aborts a small file (kept in memory) that stalls mid-body and downloads it again whole', async () => {
    const body = randomBytes(200 * 1024)
    host.files.set('/slow/small.bin', { body, stallAt: 80 * 1024 })
    const out = await copy(fileAt('/slow/small.bin'), deps({ limits: { maxBytes: 8e6, stallTimeoutMs: 300, attempts: 3 } }))
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body) })
    expect(host.requestsOf('/slow/small.bin').map((r) => r.range)).toEqual([undefined, undefined])
    expect(readdirSync(spoolDir)).toEqual([])
  })

  it("resumes a killed process's .part with a Range and stores the whole file's hash", async () => {
    const body = randomBytes(600_000)
    host.files.set('/resume/data.bin', { body })
    const file = fileAt('/resume/data.bin')
    writeFileSync(spoolPath(spoolDir, file.id), body.subarray(0, 250_000))
    const out = await copy(file)
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body) })
    const [req] = host.requestsOf('/resume/data.bin')
    expect(req).toMatchObject({ range: 'bytes=250000-', status: 206, sent: body.length - 250_000 })
  })

  it('finishes a .part that already holds the whole file (killed before the upload) without downloading again', async () => {
    const body = randomBytes(70_000)
    host.files.set('/resume/done.bin', { body })
    const file = fileAt('/resume/done.bin')
    writeFileSync(spoolPath(spoolDir, file.id), body)
    const out = await copy(file)
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body) })
    expect(host.requestsOf('/resume/done.bin')).toMatchObject([{ status: 416, sent: 0 }])
  })

  it('restarts from byte 0 when the host ignores the Range (never appends the whole file to the part)', async () => {
    const body = randomBytes(300_000)
    host.files.set('/norange/file.bin', { body, ranges: false })
    const file = fileAt('/norange/file.bin')
    writeFileSync(spoolPath(spoolDir, file.id), body.subarray(0, 100_000))
    const out = await copy(file)
    expect(out).toMatchObject({ ok: true, bytes: body.length, sha256: sha(body) })
    expect(host.requestsOf('/norange/file.bin')).toMatchObject([{ range: 'bytes=100000-', status: 200 }])
  })

  it('keeps a small file in memory (no spool file), and downloads it again after a refused write', async () => {
    const body = png(20_000)
    host.files.set('/small/icon.png', { body })
    const file = fileAt('/small/icon.png')
    s3.fail = (method) => (method === 'PUT' ? 503 : undefined)
    try {
      await expect(copy(file)).rejects.toBeInstanceOf(StoreUnavailableError)
    } finally {
      s3.fail = undefined
    }
    expect(readdirSync(spoolDir)).toEqual([])
    const out = await copy(file)
    expect(out).toMatchObject({ ok: true, sha256: sha(body), sniffedType: 'image/png', uploaded: true })
    expect(host.requestsOf('/small/icon.png').map((r) => [r.status, r.range])).toEqual([
      [200, undefined],
      [200, undefined],
    ])
  })

  it('fails a small body longer than announced while keeping it in memory', async () => {
    host.files.set('/small/liar.bin', { body: randomBytes(5000), answers: [] })
    const reader = createHttpReader()
    const lying: CopyDeps = deps({
      reader: {
        async open(ref, options) {
          const opened = await reader.open(ref, options)
          return { ...opened, size: 4000 }
        },
      },
    })
    const out = await copy(fileAt('/small/liar.bin'), lying)
    expect(out).toMatchObject({ ok: false, cause: 'size-mismatch', retryable: false })
  })

  it('fails bytes of another kind than the record states as wrong-type', async () => {
    host.files.set('/type/report.pdf', { body: png(1000), type: 'application/pdf' })
    const out = await copy(fileAt('/type/report.pdf', { expectedType: 'application/pdf' }))
    expect(out).toMatchObject({ ok: false, cause: 'wrong-type' })
  })

  it('fails a file whose size differs from the record as size-mismatch', async () => {
    host.files.set('/size/notes.txt', { body: Buffer.from('twelve bytes'), type: 'text/plain' })
    const out = await copy(fileAt('/size/notes.txt', { expectedSize: 13 }))
    expect(out).toMatchObject({ ok: false, cause: 'size-mismatch' })
  })

  it('throws StoreUnavailableError when the store refuses the write, keeps the bytes, and copies without downloading again later', async () => {
    const body = png(20_000)
    host.files.set('/store/down.png', { body })
    const file = fileAt('/store/down.png')
    const spooling = deps({ limits: { maxBytes: 8e6, stallTimeoutMs: 2000, attempts: 3, memoryBytes: 0 } })
    s3.fail = (method) => (method === 'PUT' ? 503 : undefined)
    try {
      await expect(copy(file, spooling)).rejects.toBeInstanceOf(StoreUnavailableError)
    } finally {
      s3.fail = undefined
    }
    expect(existsSync(spoolPath(spoolDir, file.id))).toBe(true)
    const out = await copy(file, spooling)
    expect(out).toMatchObject({ ok: true, sha256: sha(body), uploaded: true })
    expect(host.requestsOf('/store/down.png').map((r) => r.status)).toEqual([200, 416])
  })
})

/** A file whose URL carries a token in its query, as Slack's `?t=` does. */
function withQueryToken(path: string): FileToCopy {
  const url = new URL(host.url(path))
  url.searchParams.set('t', 'xoxe-query-token')
  return { id: `f${++ids}`, locator: { reader: 'http', ref: url.toString(), host: url.host }, name: 'contract.pdf', expectedType: 'application/pdf' }
}
