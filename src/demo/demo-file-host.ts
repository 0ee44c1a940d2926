/**
 * The demo's two file servers in one (issue 27), on 127.0.0.1: the legacy system's file host —
 * `/legacy/<post>/<size>/report.pdf`, a PDF of exactly `size` bytes whose content follows from the
 * post id (so the demo can tell a copy from its source) — and the local store's public base URL —
 * `/store/<key>`, the files the files lane copied into `storeDir` — so the sandbox and `verify`
 * can fetch every copy as a customer's client would.
 */
import { createHash } from 'node:crypto'
import { createReadStream, statSync } from 'node:fs'
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import { join, normalize, resolve, sep } from 'node:path'

export interface DemoFileHost {
  /** Base of the legacy file URLs: `<origin>/legacy`. */
  readonly legacyBase: string
  /** The local store's public base URL: `<origin>/store`. */
  readonly storeBase: string
  close(): Promise<void>
}

/** The demo's legacy bytes of one post's file: a PDF header, then bytes derived from the post id, `size` in all. */
export function demoFileBytes(post: string, size: number): Buffer {
  const header = Buffer.from('%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', 'latin1')
  const out = Buffer.alloc(Math.max(size, header.length))
  header.copy(out)
  let block = createHash('sha256').update(post).digest()
  for (let at = header.length; at < out.length; at += block.length) {
    block.copy(out, at, 0, Math.min(block.length, out.length - at))
    block = createHash('sha256').update(block).digest()
  }
  return out
}

export async function startDemoFileHost(storeDir: string): Promise<DemoFileHost> {
  const root = resolve(storeDir)
  const server = createServer((req, res) => {
    const path = decodeURIComponent(new URL(req.url ?? '/', 'http://x').pathname)
    const legacy = /^\/legacy\/([^/]+)\/(\d+)\/[^/]+$/.exec(path)
    if (legacy) {
      const bytes = demoFileBytes(legacy[1] as string, Number(legacy[2]))
      res.writeHead(200, { 'content-type': 'application/pdf', 'content-length': String(bytes.length) })
      res.end(req.method === 'HEAD' ? undefined : bytes)
      return
    }
    if (path.startsWith('/store/')) {
      const file = normalize(join(root, path.slice('/store/'.length)))
      if (file.startsWith(root + sep)) {
        try {
          const size = statSync(file).size
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': String(size) })
          if (req.method === 'HEAD') {
            res.end()
          } else {
            createReadStream(file).pipe(res)
          }
          return
        } catch {
          // Not there: 404 below.
        }
      }
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found')
  })
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok))
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  return {
    legacyBase: `${origin}/legacy`,
    storeBase: `${origin}/store`,
    close: () =>
      new Promise<void>((ok) => {
        server.closeAllConnections()
        server.close(() => ok())
      }),
  }
}
