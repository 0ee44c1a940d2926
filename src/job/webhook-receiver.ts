/**
 * The receiver of `chatferry webhooks receive` (issue 15): an HTTP server (plain, behind the
 * user's TLS proxy, or HTTPS with a certificate and key) taking the platform's webhook deliveries
 * and storing the changes they report in the ledger (`store.platformEvents`).
 *
 * Each delivery, in this order:
 * 1. not a POST → 405 (GET `/healthz` → 200, for a proxy's or an orchestrator's probe);
 * 2. Basic auth checked against the registration's hash → 401, nothing read or stored;
 * 3. the body (≤ 1 MiB, else 413) parsed as JSON and checked with zod (`WebhookEnvelope`: the
 *    published envelope and each trigger's data) → 400, logged with the fields at fault and never a
 *    value or a header; an envelope of another app → 400;
 * 4. the changes it reports stored once (a redelivery is recognised by its content) → 200; a
 *    trigger that changes nothing chatferry loaded → 200, not stored.
 *
 * The platform wants an answer within 2 s (`fundamentals/webhooks-overview.mdx`). Storing is one
 * short transaction; if it has not finished after `storeDeadlineMs` (1.5 s), or fails, the answer is
 * 503 so the platform (`retryOnFailure`) delivers it again — a delivery is never acknowledged
 * before it is stored.
 */
import { readFileSync } from 'node:fs'
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import type { AddressInfo } from 'node:net'

import type { Logger } from 'pino'

import type { PlatformEventsLedger } from '../state/index.ts'
import { envelopeHash, platformChangesOf } from '../target/webhook-changes.ts'
import { WebhookEnvelope } from '../target/webhooks.ts'
import { passwordMatches } from './webhook-registration.ts'

const MAX_BODY_BYTES = 1024 * 1024

export interface ReceiverOptions {
  readonly ledger: PlatformEventsLedger
  readonly jobId: string
  readonly appId: string
  /** What deliveries must carry: the username and the password's hash. */
  readonly auth: { readonly username: string; readonly passwordHash: string }
  readonly host: string
  readonly port: number
  /** HTTPS with these PEM files; absent: plain HTTP (behind a TLS proxy). */
  readonly tls?: { readonly certFile: string; readonly keyFile: string }
  readonly logger: Logger
  /** How long storing may take before the answer is 503 (default 1500 ms, under the platform's 2 s). */
  readonly storeDeadlineMs?: number
}

/** What the receiver answered, since it started. */
export interface ReceiverCounters {
  /** Deliveries stored (their changes recorded). */
  stored: number
  /** Of those, deliveries with a change made on the platform (not chatferry's echo). */
  platform: number
  /** Deliveries already stored (a redelivery): answered 200, stored once. */
  redelivered: number
  /** Valid deliveries of triggers that change nothing chatferry loaded: answered 200, not stored. */
  ignored: number
  /** 401: wrong or missing credentials. */
  unauthorized: number
  /** 400/413: not an envelope. */
  malformed: number
  /** 503: the ledger could not store it in time (the platform retries). */
  failed: number
}

export interface Receiver {
  /** The address it listens on. */
  readonly address: AddressInfo
  readonly counters: ReceiverCounters
  /** Stops listening; waits for the deliveries in hand. */
  close(): Promise<void>
}

/** `user:password` of a Basic `Authorization` header, or undefined. */
function basicCredentials(header: string | undefined): { user: string; password: string } | undefined {
  const m = /^Basic\s+([A-Za-z0-9+/=]+)\s*$/i.exec(header ?? '')
  if (!m) {
    return undefined
  }
  const decoded = Buffer.from(m[1] as string, 'base64').toString('utf8')
  const colon = decoded.indexOf(':')
  return colon < 0 ? undefined : { user: decoded.slice(0, colon), password: decoded.slice(colon + 1) }
}

function answer(res: ServerResponse, status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers })
  res.end(JSON.stringify(body))
}

/** Reads the body up to the limit; undefined when it is larger. */
async function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  const chunks: Buffer[] = []
  let size = 0
  for await (const chunk of req) {
    size += (chunk as Buffer).length
    if (size > MAX_BODY_BYTES) {
      return undefined
    }
    chunks.push(chunk as Buffer)
  }
  return Buffer.concat(chunks)
}

/** The fields at fault in a body that is not an envelope (paths and messages, never values). */
function envelopeProblems(body: Buffer): { problems: string[]; envelope?: WebhookEnvelope } {
  let json: unknown
  try {
    json = JSON.parse(body.toString('utf8'))
  } catch {
    return { problems: ['the body is not JSON'] }
  }
  const r = WebhookEnvelope.safeParse(json)
  if (!r.success) {
    return { problems: r.error.issues.slice(0, 10).map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`) }
  }
  return { problems: [], envelope: r.data }
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`not stored within ${ms} ms`)), ms)
  })
  return Promise.race([work, late]).finally(() => clearTimeout(timer))
}

function handler(o: ReceiverOptions, counters: ReceiverCounters) {
  const log = o.logger.child({ component: 'webhook-receiver', jobId: o.jobId })
  const deadline = o.storeDeadlineMs ?? 1500
  return async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    if (req.method === 'GET' && (req.url ?? '').split('?')[0] === '/healthz') {
      return answer(res, 200, { ok: true })
    }
    if (req.method !== 'POST') {
      return answer(res, 405, { error: 'deliveries are POST requests' }, { allow: 'POST' })
    }
    const creds = basicCredentials(req.headers.authorization)
    if (creds === undefined || creds.user !== o.auth.username || !passwordMatches(creds.password, o.auth.passwordHash)) {
      counters.unauthorized++
      req.resume()
      log.warn(
        { from: req.socket.remoteAddress, credentials: creds === undefined ? 'missing' : 'wrong' },
        'delivery refused (401): not the webhook credentials',
      )
      return answer(res, 401, { error: 'unauthorized' }, { 'www-authenticate': 'Basic realm="chatferry"' })
    }
    const body = await readBody(req)
    if (body === undefined) {
      counters.malformed++
      log.warn({ limitBytes: MAX_BODY_BYTES }, 'delivery refused (413): the body is too large')
      return answer(res, 413, { error: 'the body is too large' })
    }
    const { problems, envelope } = envelopeProblems(body)
    if (envelope === undefined || envelope.appId !== o.appId) {
      counters.malformed++
      const why = envelope === undefined ? problems : [`appId: not the job's app ${o.appId}`]
      log.warn({ problems: why }, 'delivery refused (400): not a webhook envelope of this app')
      return answer(res, 400, { error: 'not a webhook envelope', problems: why })
    }
    const changes = platformChangesOf(envelope)
    if (changes.length === 0) {
      counters.ignored++
      log.debug({ trigger: envelope.trigger }, 'delivery taken, nothing to store (the trigger changes nothing chatferry loaded)')
      return answer(res, 200, { ok: true, stored: 0 })
    }
    try {
      const r = await withDeadline(
        o.ledger.record(o.jobId, { eventHash: envelopeHash(envelope), trigger: envelope.trigger, webhookId: envelope.webhook, changes }),
        deadline,
      )
      if (r.redelivery) {
        counters.redelivered++
      } else {
        counters.stored++
        counters.platform += r.platform > 0 ? 1 : 0
      }
      log.info(
        { trigger: envelope.trigger, items: changes.length, onPlatform: r.platform, redelivery: r.redelivery },
        r.redelivery ? 'delivery already stored (a redelivery)' : 'delivery stored',
      )
      return answer(res, 200, { ok: true, stored: r.stored })
    } catch (err) {
      counters.failed++
      log.error({ err: (err as Error).message, trigger: envelope.trigger }, 'delivery not stored (503): the platform will deliver it again')
      return answer(res, 503, { error: 'not stored; deliver again' })
    }
  }
}

/** Starts the receiver; resolves once it listens. */
export async function startReceiver(o: ReceiverOptions): Promise<Receiver> {
  const counters: ReceiverCounters = { stored: 0, platform: 0, redelivered: 0, ignored: 0, unauthorized: 0, malformed: 0, failed: 0 }
  const handle = handler(o, counters)
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      o.logger.error({ err: (err as Error).message }, 'webhook receiver: a delivery failed')
      if (!res.headersSent) {
        answer(res, 500, { error: 'internal error' })
      }
    })
  }
  const server: Server = o.tls
    ? createHttpsServer({ cert: readFileSync(o.tls.certFile), key: readFileSync(o.tls.keyFile) }, listener)
    : createHttpServer(listener)
  // Deliveries must be answered within 2 s: a slow or idle client never holds a socket long.
  server.requestTimeout = 10_000
  server.headersTimeout = 5_000
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(o.port, o.host, () => {
      server.off('error', reject)
      resolve()
    })
  })
  return {
    address: server.address() as AddressInfo,
    counters,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve())
        server.closeIdleConnections()
      }),
  }
}
