/**
 * The `http` reader against a real local HTTP server: statuses become file failures (401/403
 * denied, 500 unavailable and retryable), a refused connection is unavailable, the token given at
 * construction goes with each request but never into an error, URLs in errors lose their query,
 * and a Range is honoured (206) or not (200, start 0).
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { text } from 'node:stream/consumers'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createHttpReader } from '../../../src/files/read/http-reader.ts'
import { FileSourceError } from '../../../src/model/files.ts'
import { type FileHost, startFileHost } from '../../helpers/file-host.ts'
import { testSecret } from '../../helpers/secrets.ts'

let host: FileHost
const TOKEN = testSecret('readertoken')
const reader = createHttpReader({ headers: { authorization: `Bearer ${TOKEN}` } })

beforeAll(async () => {
  host = await startFileHost()
  host.files.set('/f.txt', { body: Buffer.from('0123456789'), type: 'text/plain' })
  host.files.set('/plain.txt', { body: Buffer.from('0123456789'), ranges: false })
})
afterAll(async () => {
  await host.close()
})

async function failureOf(url: string): Promise<FileSourceError> {
  const err = await reader.open(url).then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err).toBeInstanceOf(FileSourceError)
  const e = err as FileSourceError
  expect(`${e.message} ${e.stack}`).not.toContain(TOKEN)
  expect(e.message).not.toContain('sig=')
  return e
}

describe('the http reader', () => {
  it('reads a file with its size and type, sending the configured Authorization', async () => {
    const opened = await reader.open(host.url('/f.txt'))
    expect([await text(opened.body), opened.size, opened.start, opened.contentType]).toEqual(['0123456789', 10, 0, 'text/plain'])
    expect(host.requestsOf('/f.txt').at(-1)?.authorization).toBe(`Bearer ${TOKEN}`)
  })

  it('asks from an offset with a Range and says where the body starts', async () => {
    const opened = await reader.open(host.url('/f.txt'), { offset: 4 })
    expect([await text(opened.body), opened.size, opened.start]).toEqual(['456789', 10, 4])
    const ignored = await reader.open(host.url('/plain.txt'), { offset: 4 })
    expect([await text(ignored.body), ignored.size, ignored.start]).toEqual(['0123456789', 10, 0])
  })

  it.each([
    [401, 'denied', false],
    [403, 'denied', false],
    [410, 'missing', false],
    [500, 'unavailable', true],
    [503, 'unavailable', true],
  ] as const)('HTTP %i is %s (retryable %s), the URL shown without its query', async (status, cause, retryable) => {
    host.files.set(`/status/${status}`, { body: Buffer.alloc(1), answers: [{ status }] })
    const err = await failureOf(`${host.url(`/status/${status}`)}?sig=abc`)
    expect([err.fileCause, err.retryable]).toEqual([cause, retryable])
    expect(err.message).toContain(`${host.origin}/status/${status}:`)
  })

  it('a refused connection is unavailable and retryable', async () => {
    const closed = createServer()
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve))
    const port = (closed.address() as AddressInfo).port
    await new Promise((resolve) => closed.close(resolve))
    const err = await failureOf(`http://127.0.0.1:${port}/x?sig=1`)
    expect([err.fileCause, err.retryable]).toEqual(['unavailable', true])
    expect(err.message).toMatch(/ECONNREFUSED/)
  })

  it('a connection reset before the answer is unavailable and retryable', async () => {
    const server = createServer((req) => req.socket.destroy())
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    try {
      const err = await failureOf(`http://127.0.0.1:${(server.address() as AddressInfo).port}/reset`)
      expect([err.fileCause, err.retryable]).toEqual(['unavailable', true])
    } finally {
      server.close()
    }
  })

  it('refuses a ref that is not an http(s) URL as missing', async () => {
    const err = await failureOf('file:///etc/passwd')
    expect(err.fileCause).toBe('missing')
  })
})
