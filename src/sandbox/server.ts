/**
 * The sandbox's `node:http` server: routes a request, reads its body (up to a cap), runs the
 * handler and writes the JSON answer. Bad input never crashes or hangs it: unknown path → 404,
 * wrong method → 405 (both `ERR_API_NOT_FOUND`, documented "wrong path or method"), a body over
 * the cap → 413 and reading stops, an uncaught handler error → 500 `ERR_EXCEPTION`.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'

import type { Logger } from 'pino'

import { errorBody, type HeaderMap, HttpError, type Reply, type RequestContext } from './http-kit.ts'
import type { Router } from './router.ts'

/** The default cap of a request body: 4 MiB (50 messages of 65,536 characters fit easily). */
export const DEFAULT_MAX_BODY_BYTES = 4 * 1024 * 1024

/** What the HTTP server needs. */
export interface ServerOptions {
  readonly router: Router
  readonly logger: Logger
  readonly maxBodyBytes: number
}

class BodyTooLarge extends Error {}

function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers['content-length'])
    if (Number.isFinite(declared) && declared > max) {
      reject(new BodyTooLarge())
      return
    }
    const chunks: Buffer[] = []
    let size = 0
    let done = false
    const finish = (err?: Error) => {
      if (done) {
        return
      }
      done = true
      req.off('data', onData)
      req.off('end', onEnd)
      req.off('error', onError)
      if (err) {
        reject(err)
      } else {
        resolve(Buffer.concat(chunks, size))
      }
    }
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > max) {
        req.pause()
        finish(new BodyTooLarge())
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => finish()
    const onError = (err: Error) => finish(err)
    req.on('data', onData)
    req.on('end', onEnd)
    req.on('error', onError)
  })
}

function send(res: ServerResponse, status: number, body: unknown, headers: HeaderMap = {}, close = false): void {
  if (res.headersSent || res.destroyed) {
    return
  }
  const text = body === undefined ? '' : JSON.stringify(body)
  const out: Record<string, string> = { 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)) }
  for (const [k, v] of Object.entries(headers)) {
    out[k] = String(v)
  }
  if (close) {
    out.connection = 'close'
  }
  res.writeHead(status, out)
  res.end(text)
}

/** A node:http server (not yet listening) answering through `options.router`. */
export function createSandboxServer(options: ServerOptions): Server {
  const { router, logger, maxBodyBytes } = options

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const receivedAtMs = Date.now()
    const method = (req.method ?? 'GET').toUpperCase()
    let url: URL
    try {
      url = new URL(req.url ?? '/', 'http://sandbox.invalid')
    } catch {
      send(res, 400, errorBody('ERR_BAD_REQUEST', 'The request URL is malformed.'))
      return
    }
    const path = url.pathname.length > 1 ? url.pathname.replace(/\/+$/, '') : url.pathname
    const match = router.match(method, path)
    if (match.kind === 'not-found') {
      send(res, 404, errorBody('ERR_API_NOT_FOUND', `There is no API at ${method} ${path}.`))
      return
    }
    if (match.kind === 'method-not-allowed') {
      send(res, 405, errorBody('ERR_API_NOT_FOUND', `${path} does not answer ${method}; it answers ${match.allow.join(', ')}.`), {
        allow: match.allow.join(', '),
      })
      return
    }
    let body: Buffer = Buffer.alloc(0)
    if (match.route.readsBody) {
      try {
        body = await readBody(req, maxBodyBytes)
      } catch (err) {
        if (err instanceof BodyTooLarge) {
          send(res, 413, errorBody('ERR_BAD_REQUEST', `The request body is larger than ${maxBodyBytes} bytes.`), {}, true)
          // Reading stopped; the rest of the upload is not wanted.
          res.once('finish', () => req.socket.destroySoon())
          return
        }
        // The client went away mid-body: nobody to answer.
        req.socket.destroy()
        return
      }
    }
    const ctx: RequestContext = { req, method, path, query: url.searchParams, params: match.params, body, receivedAtMs }
    let reply: Reply
    try {
      reply = await match.route.handler(ctx)
    } catch (err) {
      if (err instanceof HttpError) {
        reply = err.toReply()
      } else {
        logger.error({ err, method, path }, 'sandbox handler failed')
        reply = { status: 500, body: errorBody('ERR_EXCEPTION', 'An unexpected error occurred.', (err as Error)?.message ?? String(err)) }
      }
    }
    if ('drop' in reply) {
      req.socket.destroy()
      return
    }
    send(res, reply.status, reply.body, reply.headers)
    logger.debug({ method, path, status: reply.status, ms: Date.now() - receivedAtMs }, 'sandbox request')
  }

  const server = createServer({ requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 5_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, 'sandbox request failed')
      send(res, 500, errorBody('ERR_EXCEPTION', 'An unexpected error occurred.'))
    })
  })
  server.on('clientError', (_err, socket) => {
    if (socket.writable) {
      socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n')
    } else {
      socket.destroy()
    }
  })
  return server
}
