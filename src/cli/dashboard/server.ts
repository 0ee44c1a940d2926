/**
 * The dashboards' web server (node:http): a page, its script, and `/api/view` (the sampler's last
 * view as JSON) — the job's page (page.ts) for `chatferry dashboard`, the fleet's (fleet-page.ts)
 * for `chatferry fleet dashboard`. Read-only: GET and HEAD only, nothing it serves writes the ledger.
 * The view carries what `status --json` prints plus rejects and the throughput series, never the
 * configuration's secrets (the API key, the ledger's or source's URL are not in it). Responses are
 * never cached and forbid any script, style or request from elsewhere (Content-Security-Policy).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { authorized } from './auth.ts'

export interface DashboardServerOptions {
  readonly host: string
  readonly port: number
  /** Required on every request when set (see src/cli/dashboard/auth.ts). */
  readonly token?: string
  /** How often the page asks for the view. */
  readonly refreshMs: number
  /** The page and its one script. */
  readonly page: { readonly html: string; readonly js: string }
  /** The sampler's last view; undefined until the ledger was first read. */
  readonly view: () => object | undefined
}

const SECURITY_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'content-security-policy': "default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; connect-src 'self'; img-src 'self'",
}

export async function startDashboardServer(options: DashboardServerOptions): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => handle(req, res, options))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(options.port, options.host, () => (server.off('error', reject), resolve()))
  })
  const { port } = server.address() as AddressInfo
  const host = options.host.includes(':') ? `[${options.host}]` : options.host
  return {
    url: `http://${host}:${port}/`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeAllConnections()
      }),
  }
}

function handle(req: IncomingMessage, res: ServerResponse, options: DashboardServerOptions): void {
  if (!authorized(req, options.token)) {
    res.writeHead(401, { ...SECURITY_HEADERS, 'www-authenticate': 'Basic realm="chatferry dashboard", charset="UTF-8"' })
    res.end('a token is required: Basic auth with the token as password, or Authorization: Bearer <token>\n')
    return
  }
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { ...SECURITY_HEADERS, allow: 'GET, HEAD' })
    res.end()
    return
  }
  const path = new URL(req.url ?? '/', 'http://dashboard').pathname
  if (path === '/' || path === '/index.html') {
    send(res, 'text/html; charset=utf-8', options.page.html.replace('<html lang="en">', `<html lang="en" data-refresh="${options.refreshMs}">`))
  } else if (path === '/app.js') {
    send(res, 'text/javascript; charset=utf-8', options.page.js)
  } else if (path === '/api/view') {
    const view = options.view()
    if (view === undefined) {
      res.writeHead(503, SECURITY_HEADERS)
      res.end('the ledger has not been read yet\n')
      return
    }
    send(res, 'application/json', JSON.stringify(view))
  } else if (path === '/favicon.ico') {
    res.writeHead(204, SECURITY_HEADERS)
    res.end()
  } else {
    res.writeHead(404, SECURITY_HEADERS)
    res.end('not found\n')
  }
}

function send(res: ServerResponse, type: string, body: string): void {
  res.writeHead(200, { ...SECURITY_HEADERS, 'content-type': type, 'content-length': Buffer.byteLength(body) })
  res.end(res.req.method === 'HEAD' ? undefined : body)
}
