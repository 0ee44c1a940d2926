/**
 * A loopback HTTP proxy in front of the sandbox that can hold the *answers* of chosen requests: the
 * request reaches the sandbox and is applied there, but its answer waits (`holdMs`) before it goes
 * back to the client. Killing the client while an answer is held leaves exactly the state a crash
 * between a call and its settlement leaves: the platform has applied what the ledger only knows as
 * `sent`. Tests wait for `held(n)` (the n-th held answer) and kill then. It can also answer a
 * status itself without forwarding (`fail`): a failure the platform never saw; or hold a *request*
 * (`late`) and forward it only after `holdMs`, also when the client has given up by then: a request
 * that reaches the platform after the client's timeout.
 */
import { createServer, request as httpRequest, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

export interface HoldingProxy {
  /** The proxy's origin, e.g. `http://127.0.0.1:40123`. */
  readonly origin: string
  /** Answers of requests matching this are held; set to undefined to hold none. */
  hold: ((method: string, path: string) => boolean) | undefined
  /** A status to answer *instead of* forwarding the request (the platform never sees it); undefined forwards. */
  fail: ((method: string, path: string) => number | undefined) | undefined
  /** Requests matching this reach the sandbox `holdMs` late (the client may have timed out by then). */
  late: ((method: string, path: string) => boolean) | undefined
  readonly holdMs: number
  /** Resolves once every late request has been forwarded and the sandbox has answered it. */
  lateDone(): Promise<void>
  /** Resolves once `n` answers have been held (counting from the start). */
  held(n: number, timeoutMs?: number): Promise<void>
  close(): Promise<void>
}

export async function startHoldingProxy(target: string, holdMs: number): Promise<HoldingProxy> {
  const upstream = new URL(target)
  let heldCount = 0
  const lateRequests: Promise<void>[] = []
  const waiters: { n: number; resolve: () => void }[] = []
  const proxy: HoldingProxy = {
    origin: '',
    hold: undefined,
    fail: undefined,
    late: undefined,
    holdMs,
    lateDone: async () => {
      await Promise.all(lateRequests)
    },
    held(n, timeoutMs = 30_000) {
      if (heldCount >= n) {
        return Promise.resolve()
      }
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`only ${heldCount} answers were held, waiting for ${n}`)), timeoutMs)
        waiters.push({ n, resolve: () => (clearTimeout(t), resolve()) })
      })
    },
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  }
  const server: Server = createServer((req, res) => {
    const failWith = proxy.fail?.(req.method ?? 'GET', req.url ?? '')
    if (failWith !== undefined) {
      req.resume()
      res.writeHead(failWith, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { code: 'ERR_PROXY_INJECTED', message: `injected ${failWith}` } }))
      return
    }
    const late = proxy.late?.(req.method ?? 'GET', req.url ?? '') === true
    // A late request gets a connection of its own when it is finally sent: a pooled one may have
    // been closed by the sandbox meanwhile, and the request would never arrive.
    const forward = () =>
      httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, ...(late ? { agent: false } : {}) },
        (answer) => {
          const chunks: Buffer[] = []
          answer.on('data', (c: Buffer) => chunks.push(c))
          answer.on('end', () => {
            const send = () => {
              if (!res.destroyed) {
                res.writeHead(answer.statusCode ?? 502, answer.headers)
                res.end(Buffer.concat(chunks))
              }
            }
            if (proxy.hold?.(req.method ?? 'GET', req.url ?? '') === true) {
              heldCount++
              for (const w of [...waiters]) {
                if (heldCount >= w.n) {
                  waiters.splice(waiters.indexOf(w), 1)
                  w.resolve()
                }
              }
              setTimeout(send, holdMs)
            } else {
              send()
            }
          })
        },
      ).on('error', () => res.destroy())
    if (late) {
      const body: Buffer[] = []
      req.on('data', (c: Buffer) => body.push(c))
      const arrived = new Promise<void>((resolve, reject) =>
        req.on('end', () =>
          setTimeout(() => {
            const up = forward()
            up.on('response', (a) => a.on('end', resolve)).on('error', (err) =>
              reject(new Error(`the late request never reached the sandbox: ${err.message}`)),
            )
            up.end(Buffer.concat(body))
          }, holdMs),
        ),
      )
      arrived.catch(() => {}) // awaited by lateDone()
      lateRequests.push(arrived)
      return
    }
    const up = forward()
    req.pipe(up)
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as AddressInfo
  return Object.assign(proxy, { origin: `http://127.0.0.1:${port}` })
}
