/**
 * A legacy system's file host for the files lane's tests: an HTTP server on 127.0.0.1 serving
 * files from memory at `/f/<name>`, with a request log (method, name, range, status) and what a
 * real file host does wrong on demand: a missing file (404), an expired token's HTML login page
 * served as the file, a file throttled to `slowBytesPerSecond` (so a test can kill a run while it
 * downloads), and `Range` requests honoured (resume).
 */
import { createHash, randomBytes } from 'node:crypto'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface FileServerRequest {
  readonly method: string
  readonly name: string
  readonly range: string | undefined
  readonly status: number
}

export interface LegacyFile {
  /** The file's bytes (empty: the legacy record states no size). */
  readonly bytes: Buffer
  readonly type: string
  /** Served as this instead of the bytes. */
  readonly serve?: 'missing' | 'login-page'
  /** Sent at this many bytes per second (chunks of 64 KiB). */
  readonly slowBytesPerSecond?: number
}

export interface FileServer {
  readonly origin: string
  readonly files: Map<string, LegacyFile>
  readonly requests: FileServerRequest[]
  /** Names requested, in order, logged when a request arrives (`requests` logs them when answered). */
  readonly started: string[]
  urlOf(name: string): string
  close(): Promise<void>
}

/** Random bytes that start with a PNG signature (so sniffing finds `image/png`). */
export function pngBytes(size: number): Buffer {
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  return Buffer.concat([signature, randomBytes(Math.max(0, size - signature.length))])
}

/** Random bytes that start with a PDF header (`application/pdf`). */
export function pdfBytes(size: number): Buffer {
  const header = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')
  return Buffer.concat([header, randomBytes(Math.max(0, size - header.length))])
}

export function sha256(bytes: Buffer | Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex')
}

export async function startFileServer(): Promise<FileServer> {
  const files = new Map<string, LegacyFile>()
  const requests: FileServerRequest[] = []
  const started: string[] = []
  const server = createServer((req, res) => {
    const name = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname.replace(/^\/f\//, ''))
    const range = req.headers.range
    started.push(name)
    res.on('finish', () => requests.push({ method: req.method ?? 'GET', name, range, status: res.statusCode }))
    const file = files.get(name)
    if (file === undefined || file.serve === 'missing') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
      return
    }
    if (file.serve === 'login-page') {
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end('<!DOCTYPE html><html><body>Please sign in</body></html>')
      return
    }
    const m = /^bytes=(\d+)-$/.exec(range ?? '')
    const start = m ? Math.min(Number(m[1]), file.bytes.length) : 0
    const body = file.bytes.subarray(start)
    const headers: Record<string, string> = { 'content-type': file.type, 'content-length': String(body.length), 'accept-ranges': 'bytes' }
    if (m) {
      headers['content-range'] = `bytes ${start}-${file.bytes.length - 1}/${file.bytes.length}`
    }
    res.writeHead(m ? 206 : 200, headers)
    if (req.method === 'HEAD') {
      res.end()
      return
    }
    if (file.slowBytesPerSecond === undefined) {
      res.end(body)
      return
    }
    const chunk = 64 * 1024
    let at = 0
    const timer = setInterval(
      () => {
        if (res.destroyed) {
          clearInterval(timer)
          return
        }
        res.write(body.subarray(at, at + chunk))
        at += chunk
        if (at >= body.length) {
          clearInterval(timer)
          res.end()
        }
      },
      Math.max(1, Math.round((chunk / file.slowBytesPerSecond) * 1000)),
    )
    res.on('close', () => clearInterval(timer))
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    origin,
    files,
    requests,
    started,
    urlOf: (name) => `${origin}/f/${encodeURIComponent(name)}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      }),
  }
}
