/**
 * A file host for the files lane's tests: a real HTTP server on loopback serving files from memory
 * the way real hosts misbehave — ranges honoured (206) or ignored (200), a body cut short of its
 * Content-Length, a body that stalls halfway, answers of chosen statuses first (a 429 storm with
 * Retry-After, 503s), a token-protected file whose wrong token gets a login page (HTTP 200,
 * text/html, as Slack serves it). Every request is logged (path, Range, when, bytes sent, whether
 * the answer completed), so tests prove what was asked and how much was sent.
 */
import { createServer, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HostedFile {
  readonly body: Buffer
  readonly type?: string
  /** Honour `Range: bytes=N-`. @default true */
  readonly ranges?: boolean
  /** Send no Content-Length (chunked). @default false */
  readonly chunked?: boolean
  /** Answer these first, one per request: a status and headers (a 429 with Retry-After). */
  readonly answers?: { status: number; headers?: Record<string, string> }[]
  /** Send only up to this byte (of the whole file), with the full Content-Length, then cut the connection. */
  readonly truncateAt?: number
  /** Send up to this byte, then nothing more (a stall) — on the first `stallTimes` requests. */
  readonly stallAt?: number
  readonly stallTimes?: number
  /** Requires `Authorization: Bearer <token>`; any other gets the login page (200, text/html). */
  readonly token?: string
}

export interface HostRequest {
  readonly path: string
  readonly range: string | undefined
  readonly authorization: string | undefined
  readonly at: number
  status: number
  sent: number
  completed: boolean
}

export interface FileHost {
  readonly origin: string
  readonly files: Map<string, HostedFile>
  readonly requests: HostRequest[]
  /** `origin + path`. */
  url(path: string): string
  requestsOf(path: string): HostRequest[]
  close(): Promise<void>
}

export const LOGIN_PAGE = `<!DOCTYPE html>
<html><head><title>Sign in | Acme workspace</title></head>
<body><form action="/signin" method="post"><input type="email" name="email"><input type="password" name="password">
<button>Sign in</button></form></body></html>
`

export async function startFileHost(): Promise<FileHost> {
  const files = new Map<string, HostedFile>()
  const requests: HostRequest[] = []
  const stalls = new Map<string, number>()
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname
    const entry: HostRequest = {
      path,
      range: req.headers.range,
      authorization: req.headers.authorization,
      at: Date.now(),
      status: 0,
      sent: 0,
      completed: false,
    }
    requests.push(entry)
    res.on('finish', () => (entry.completed = true))
    const file = files.get(path)
    if (!file) {
      return answer(res, entry, 404, { 'content-type': 'text/plain' }, Buffer.from('not found'))
    }
    const scripted = file.answers?.shift()
    if (scripted) {
      return answer(res, entry, scripted.status, { 'content-type': 'text/plain', ...scripted.headers }, Buffer.from(`status ${scripted.status}`))
    }
    if (file.token !== undefined && req.headers.authorization !== `Bearer ${file.token}`) {
      return answer(res, entry, 200, { 'content-type': 'text/html; charset=utf-8' }, Buffer.from(LOGIN_PAGE))
    }
    const size = file.body.length
    const m = /^bytes=(\d+)-$/.exec(req.headers.range ?? '')
    let start = 0
    const headers: Record<string, string | number> = { 'content-type': file.type ?? 'application/octet-stream', 'accept-ranges': 'bytes' }
    let status = 200
    if (m && file.ranges !== false) {
      start = Number(m[1])
      if (start >= size) {
        return answer(res, entry, 416, { 'content-range': `bytes */${size}` }, Buffer.alloc(0))
      }
      status = 206
      headers['content-range'] = `bytes ${start}-${size - 1}/${size}`
    }
    if (file.chunked !== true) {
      headers['content-length'] = size - start
    }
    entry.status = status
    res.writeHead(status, headers)
    const stalled = file.stallAt !== undefined && (stalls.get(path) ?? 0) < (file.stallTimes ?? 1)
    const stopAt = stalled ? file.stallAt! : (file.truncateAt ?? size)
    const part = file.body.subarray(start, Math.max(start, stopAt))
    if (stalled) {
      stalls.set(path, (stalls.get(path) ?? 0) + 1)
    }
    void send(res, entry, part).then(() => {
      if (stalled) {
        return // nothing more, ever: the client's stall timer must end it
      }
      if (stopAt < size) {
        res.socket?.destroy()
        return
      }
      res.end()
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    files,
    requests,
    url: (path) => origin + path,
    requestsOf: (path) => requests.filter((r) => r.path === path),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
}

function answer(res: ServerResponse, entry: HostRequest, status: number, headers: Record<string, string>, body: Buffer): void {
  entry.status = status
  entry.sent = body.length
  res.writeHead(status, { ...headers, 'content-length': body.length })
  res.end(body)
}

/** Writes in 64 KiB chunks, honouring backpressure, stopping when the client goes away. */
async function send(res: ServerResponse, entry: HostRequest, bytes: Buffer): Promise<void> {
  for (let i = 0; i < bytes.length && !res.destroyed; i += 65536) {
    const chunk = bytes.subarray(i, i + 65536)
    entry.sent += chunk.length
    if (!res.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          res.off('drain', done)
          res.off('close', done)
          resolve()
        }
        res.on('drain', done)
        res.on('close', done)
      })
    }
  }
}
