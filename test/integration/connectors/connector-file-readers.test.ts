/**
 * The file readers connectors share (connectors/files/): a local directory, an S3-compatible
 * bucket (s3rver, in process) and HTTP with a bearer token (a node:http server here). Each returns
 * the exact bytes (hash compared), resumes from an offset, maps a missing or refused file to its
 * cause, and refuses any path that leads out of its root as `denied` with the reason — before
 * reading. The token goes to the file's own origin only and never into an error.
 */
import { createHash, randomBytes } from 'node:crypto'
import { chmodSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Readable } from 'node:stream'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { requireDirectory } from '../../../connectors/files/check-directory.ts'
import { bearerHttpReader } from '../../../connectors/files/http-reader.ts'
import { localDirectoryReader } from '../../../connectors/files/local-reader.ts'
import { s3ObjectReader } from '../../../connectors/files/s3-reader.ts'
import { refProblem } from '../../../connectors/files/safe-path.ts'
import { type FileReader, FileSourceError } from '../../../src/model/files.ts'
import { type SourceBucket, startSourceBucket } from '../../helpers/source-bucket.ts'

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex')

async function bytesOf(body: Readable): Promise<Buffer> {
  const parts: Buffer[] = []
  for await (const c of body) {
    parts.push(c as Buffer)
  }
  return Buffer.concat(parts)
}

async function failure(reader: FileReader, ref: string): Promise<FileSourceError> {
  const err = await reader.open(ref).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err, ref).toBeInstanceOf(FileSourceError)
  return err as FileSourceError
}

describe('refProblem (what a stored path may be)', () => {
  it.each([
    ['20240101/teams/t/channels/c/users/u/f/a.png', undefined],
    ['a..b/c', undefined],
    ['', 'empty'],
    ['../etc/passwd', "'..'"],
    ['a/../../b', "'..'"],
    ['a\\..\\b', "'..'"],
    ['/etc/passwd', 'absolute'],
    ['C:\\x', 'absolute'],
    ['a\0b', 'NUL'],
  ])('%j → %s', (ref, problem) => {
    const got = refProblem(ref)
    if (problem === undefined) {
      expect(got).toBeUndefined()
    } else {
      expect(got).toContain(problem)
    }
  })
})

describe('local directory reader', () => {
  const root = mkdtempSync(join(tmpdir(), 'cf-local-reader-'))
  const data = join(root, 'data')
  const outside = join(root, 'secret.txt')
  const big = randomBytes(3 * 1024 * 1024 + 17)
  const reader = localDirectoryReader(data)

  beforeAll(() => {
    mkdirSync(join(data, 'a/b'), { recursive: true })
    writeFileSync(join(data, 'a/b/big.bin'), big)
    writeFileSync(outside, 'not yours')
    symlinkSync(outside, join(data, 'a/escape.txt'))
    symlinkSync(join(data, 'a/b/big.bin'), join(data, 'a/inside-link.bin'))
    writeFileSync(join(data, 'locked.bin'), 'x')
    chmodSync(join(data, 'locked.bin'), 0)
  })
  afterAll(() => rmSync(root, { recursive: true, force: true }))

  it('returns the exact bytes and the size', async () => {
    const f = await reader.open('a/b/big.bin')
    expect(f.size).toBe(big.length)
    expect(f.start).toBe(0)
    expect(sha(await bytesOf(f.body))).toBe(sha(big))
  })

  it('resumes from an offset', async () => {
    const f = await reader.open('a/b/big.bin', { offset: 1_000_003 })
    expect(f.start).toBe(1_000_003)
    expect(sha(await bytesOf(f.body))).toBe(sha(big.subarray(1_000_003)))
  })

  it('follows a symlink that stays inside the root', async () => {
    expect(sha(await bytesOf((await reader.open('a/inside-link.bin')).body))).toBe(sha(big))
  })

  it('a missing file is missing', async () => {
    const e = await failure(reader, 'a/b/nope.bin')
    expect([e.fileCause, e.retryable]).toEqual(['missing', false])
    expect(e.message).toContain('a/b/nope.bin')
  })

  it.each([['../secret.txt'], [outside], ['a/escape.txt'], ['a/../../secret.txt']])('%s is denied: it leads out of the root', async (ref) => {
    const e = await failure(reader, ref)
    expect(e.fileCause).toBe('denied')
    expect(e.message).toMatch(/absolute|'\.\.'|out of the data directory/)
  })

  it.skipIf(process.getuid?.() === 0)('a file the process may not read is denied', async () => {
    expect((await failure(reader, 'locked.bin')).fileCause).toBe('denied')
  })

  it('a data directory that does not exist is a configuration error naming the field', () => {
    expect(() => requireDirectory('source.files.directory', join(root, 'nope'), 'the data directory')).toThrow(
      /source\.files\.directory: .*nope does not exist/,
    )
    expect(() => requireDirectory('source.files.directory', outside, 'the data directory')).toThrow(/is not a directory/)
  })
})

describe('S3 object reader (s3rver)', () => {
  let bucket: SourceBucket
  let reader: FileReader
  const body = randomBytes(700_001)

  beforeAll(async () => {
    bucket = await startSourceBucket()
    await bucket.put('mm/data/20240101/x.bin', body)
    reader = s3ObjectReader({ ...bucket.settings, prefix: '/mm/data/' })
  })
  afterAll(async () => {
    await reader.close?.()
    await bucket.stop()
  })

  it('reads the key under the prefix, bytes and size exact', async () => {
    const f = await reader.open('20240101/x.bin')
    expect([f.size, f.start]).toEqual([body.length, 0])
    expect(sha(await bytesOf(f.body))).toBe(sha(body))
  })

  it('resumes with a Range', async () => {
    const f = await reader.open('20240101/x.bin', { offset: 123_456 })
    expect([f.size, f.start]).toEqual([body.length, 123_456])
    expect(sha(await bytesOf(f.body))).toBe(sha(body.subarray(123_456)))
  })

  it('an offset at the end reads the whole object again from 0', async () => {
    const f = await reader.open('20240101/x.bin', { offset: body.length })
    expect([f.size, f.start]).toEqual([body.length, 0])
    expect(sha(await bytesOf(f.body))).toBe(sha(body))
  })

  it('a missing key is missing, named by bucket and key', async () => {
    const e = await failure(reader, '20240101/none.bin')
    expect(e.fileCause).toBe('missing')
    expect(e.message).toContain('s3://legacy-files/mm/data/20240101/none.bin')
  })

  it('a traversal ref is denied without a request', async () => {
    expect((await failure(reader, '../other/x.bin')).fileCause).toBe('denied')
  })

  it('wrong credentials are denied, and the secret is in no message', async () => {
    const bad = s3ObjectReader({ ...bucket.settings, prefix: 'mm/data', secretAccessKey: 'WRONG-SECRET-123' })
    const e = await failure(bad, '20240101/x.bin')
    await bad.close?.()
    expect(e.fileCause).toBe('denied')
    expect(e.message).toContain('SignatureDoesNotMatch')
    expect(e.message).not.toContain('WRONG-SECRET-123')
    expect(e.message).not.toContain(bucket.settings.secretAccessKey)
  })
})

describe('HTTP reader with a bearer token', () => {
  const TOKEN = 'xoxp-test-secret-token'
  const file = randomBytes(200_000)
  let server: Server
  let other: Server
  let base = ''
  let otherBase = ''
  const seenAuth: (string | undefined)[] = []
  let acceptEncoding: string | undefined

  beforeAll(async () => {
    other = createServer((req, res) => {
      seenAuth.push(req.headers.authorization)
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(file.length) }).end(file)
    })
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r))
    otherBase = `http://127.0.0.1:${(other.address() as AddressInfo).port}`
    server = createServer((req, res) => {
      acceptEncoding = req.headers['accept-encoding']
      const ok = req.headers.authorization === `Bearer ${TOKEN}`
      const path = new URL(req.url ?? '/', 'http://x').pathname
      if (path === '/redirect') {
        res.writeHead(302, { location: `${otherBase}/f` }).end()
      } else if (path === '/login') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html><title>Slack</title></html>')
      } else if (path === '/busy') {
        res.writeHead(429, { 'retry-after': '7' }).end()
      } else if (path === '/down') {
        res.writeHead(503).end()
      } else if (path !== '/files/f.bin') {
        res.writeHead(404).end()
      } else if (!ok) {
        res.writeHead(401).end()
      } else {
        const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
        if (m === null) {
          res.writeHead(200, { 'content-type': 'image/png', 'content-length': String(file.length) }).end(file)
        } else {
          const from = Number(m[1])
          if (from >= file.length) {
            res.writeHead(416, { 'content-range': `bytes */${file.length}` }).end()
            return
          }
          res
            .writeHead(206, { 'content-type': 'image/png', 'content-range': `bytes ${from}-${file.length - 1}/${file.length}` })
            .end(file.subarray(from))
        }
      }
    })
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  })
  afterAll(async () => {
    await new Promise((r) => server.close(r))
    await new Promise((r) => other.close(r))
  })

  const reader = () => bearerHttpReader({ token: TOKEN })

  it('sends the token and returns the exact bytes', async () => {
    const f = await reader().open(`${base}/files/f.bin`)
    expect([f.size, f.start, f.contentType]).toEqual([file.length, 0, 'image/png'])
    expect(sha(await bytesOf(f.body))).toBe(sha(file))
  })

  it('resumes with Range (206 starts at the offset)', async () => {
    const f = await reader().open(`${base}/files/f.bin`, { offset: 150_000 })
    expect([f.size, f.start]).toEqual([file.length, 150_000])
    expect(sha(await bytesOf(f.body))).toBe(sha(file.subarray(150_000)))
  })

  it('an offset at the end (416, bytes */size) is an empty rest; past it, the whole file again from 0; bytes asked for uncompressed', async () => {
    const atEnd = await reader().open(`${base}/files/f.bin`, { offset: file.length })
    expect([atEnd.start, atEnd.size, (await bytesOf(atEnd.body)).length]).toEqual([file.length, file.length, 0])
    const past = await reader().open(`${base}/files/f.bin`, { offset: file.length + 10 })
    expect([past.start, past.size]).toEqual([0, file.length])
    expect(sha(await bytesOf(past.body))).toBe(sha(file))
    expect(acceptEncoding).toBe('identity')
  })

  it('a redirect to another origin is followed without the token', async () => {
    const f = await reader().open(`${base}/redirect`)
    expect(sha(await bytesOf(f.body))).toBe(sha(file))
    expect(seenAuth).toEqual([undefined])
  })

  it('a login page comes back as text/html for the checks to catch', async () => {
    const f = await reader().open(`${base}/login`)
    expect(f.contentType).toMatch(/^text\/html/)
    await bytesOf(f.body)
  })

  it.each([
    ['/files/none.bin', 'missing', false],
    ['/busy', 'rate-limited', true],
    ['/down', 'unavailable', true],
  ] as const)('%s → %s', async (path, cause, retryable) => {
    const e = await failure(reader(), `${base}${path}`)
    expect([e.fileCause, e.retryable]).toEqual([cause, retryable])
    expect(e.message).not.toContain(TOKEN)
    if (path === '/busy') {
      expect(e.retryAfterMs).toBe(7000)
    }
  })

  it('a token the host no longer accepts is expired-credentials, the token in no message', async () => {
    const e = await failure(bearerHttpReader({ token: 'xoxp-revoked' }), `${base}/files/f.bin?t=xoxe-query-secret`)
    expect(e.fileCause).toBe('expired-credentials')
    expect(e.message).not.toMatch(/xoxp-revoked|xoxe-query-secret/)
  })

  it('an unreachable host is unavailable and retryable', async () => {
    const e = await failure(reader(), 'http://127.0.0.1:1/f')
    expect([e.fileCause, e.retryable]).toEqual(['unavailable', true])
  })
})
