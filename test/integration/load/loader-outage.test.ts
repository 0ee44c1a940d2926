/**
 * Outages are survived honestly: against a target that answers 503 or 502 for ever, refuses
 * connections or never answers, the loader gives up within `giveUpAfterMs` + one request timeout,
 * names the cause, and rejects nothing (the same job then loads completely into a healthy app). A
 * poison item is still isolated and rejected alone; a redirect never carries the API key away.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'

import { sql } from 'kysely'
import { afterEach, describe, expect, it } from 'vitest'

import type { LoadOutcome } from '../../../src/load/loader.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_outage')

const GIVE_UP_MS = 3000
const TIMEOUT_MS = 1000
/** Startup, ledger transactions and the last backoff wake-up: generous on a busy 2-core machine. */
const MARGIN_MS = 6000

interface FaultyTarget {
  readonly url: string
  /** Every request received: its path and headers. */
  readonly seen: { path: string; headers: IncomingMessage['headers'] }[]
  close(): Promise<void>
}

const servers: Server[] = []
afterEach(async () => {
  for (const s of servers.splice(0)) {
    s.closeAllConnections()
    await new Promise((r) => s.close(r))
  }
})

async function faultyTarget(handle: (req: IncomingMessage, res: ServerResponse) => void): Promise<FaultyTarget> {
  const seen: FaultyTarget['seen'] = []
  const server = createServer((req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers })
    req.resume()
    req.on('end', () => handle(req, res))
  })
  servers.push(server)
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}/v3`,
    seen,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

/** A sandbox app and a job with 120 users planned; the app is where the job ends up healthy. */
async function job(name: string) {
  const app = await fx.sb.createApp({ id: name, settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
  await fx.store.ensureJob(name, app.id)
  await fx.store.planItems(name, 'users', users(120))
  return app
}

function load(jobId: string, appId: string, baseUrl: string, apiKey: string, settings = {}): Promise<LoadOutcome> {
  return loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId,
    appId,
    baseUrl,
    apiKey,
    requestsPerMinute: 6000,
    timeoutMs: TIMEOUT_MS,
    settings: { quotaWindowMs: 10_000, giveUpAfterMs: GIVE_UP_MS, ...settings },
  })
}

async function itemStatuses(jobId: string): Promise<Record<string, number>> {
  const r = await sql<{ status: string; n: number }>`
    select status, count(*)::int as n from chatferry.items where job_id = ${jobId} group by status`.execute(inspectLedger(fx.store))
  return Object.fromEntries(r.rows.map((x) => [x.status, Number(x.n)]))
}

/** Gave up in time, named the cause, rejected nothing; then the same job loads in full into the healthy app. */
async function expectHonestGiveUp(name: string, out: LoadOutcome, cause: RegExp, app: { id: string; baseUrl: string; apiKey: string }) {
  expect(out.status).toBe('failed')
  expect(out.error?.message).toMatch(/no request to the platform succeeded for [\d.]+ s/)
  expect(out.error?.message).toMatch(cause)
  expect(out.error?.message).not.toContain(app.apiKey)
  expect(Date.now() - out.counters.startedAt).toBeLessThan(GIVE_UP_MS + TIMEOUT_MS + MARGIN_MS)
  expect(out.counters.itemsRejected).toBe(0)
  const statuses = await itemStatuses(name)
  expect(statuses.rejected ?? 0).toBe(0)
  expect(statuses.done ?? 0).toBe(0)

  const again = await load(name, app.id, app.baseUrl, app.apiKey)
  expect(again.status).toBe('done')
  expect((await sandboxKeys(fx.sb, app.id, 'users')).size).toBe(120)
}

describe('loader against a platform that is down', () => {
  it('503 for ever: gives up naming HTTP 503, rejects nothing', async () => {
    const app = await job('down503')
    const t = await faultyTarget((_req, res) => {
      res.writeHead(503, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { code: 'ERR_SERVICE_UNAVAILABLE', message: 'maintenance' } }))
    })
    const out = await load('down503', app.id, t.url, app.apiKey)
    expect(t.seen.length).toBeGreaterThan(1)
    await expectHonestGiveUp('down503', out, /last cause: HTTP 503 ERR_SERVICE_UNAVAILABLE/, app)
  }, 60_000)

  it('500 ERR_EXCEPTION for ever: splits, but no single item is rejected while nothing succeeds', async () => {
    const app = await job('down500')
    const t = await faultyTarget((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ error: { code: 'ERR_EXCEPTION', message: 'Something went wrong' } }))
    })
    const out = await load('down500', app.id, t.url, app.apiKey, { maxAttempts: 2 })
    await expectHonestGiveUp('down500', out, /last cause: HTTP 500 ERR_EXCEPTION/, app)
  }, 60_000)

  it('502 for ever (an HTML gateway page): gives up naming HTTP 502, rejects nothing', async () => {
    const app = await job('down502')
    const t = await faultyTarget((_req, res) => {
      res.writeHead(502, { 'content-type': 'text/html' })
      res.end('<html><body>Bad Gateway</body></html>')
    })
    const out = await load('down502', app.id, t.url, app.apiKey)
    await expectHonestGiveUp('down502', out, /last cause: HTTP 502 HTTP_502/, app)
  }, 60_000)

  it('connection refused (a closed port): gives up naming it, rejects nothing', async () => {
    const app = await job('refused')
    const t = await faultyTarget(() => {})
    await t.close()
    const out = await load('refused', app.id, t.url, app.apiKey)
    await expectHonestGiveUp('refused', out, /last cause: connection refused \(ECONNREFUSED/, app)
  }, 60_000)

  it('never answers: gives up naming the timeout, rejects nothing', async () => {
    const app = await job('silent')
    const t = await faultyTarget(() => {
      // hold the request open: no answer ever
    })
    const out = await load('silent', app.id, t.url, app.apiKey)
    expect(t.seen.length).toBeGreaterThan(0)
    await expectHonestGiveUp('silent', out, /last cause: timeout after 1000 ms/, app)
  }, 60_000)

  it('a malformed 200 for ever: gives up naming it, rejects nothing', async () => {
    const app = await job('garbled')
    const t = await faultyTarget((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"unexpected": true}')
    })
    const out = await load('garbled', app.id, t.url, app.apiKey)
    await expectHonestGiveUp('garbled', out, /last cause: malformed answer \(HTTP 200\)/, app)
  }, 60_000)
})

describe('a poison item among healthy ones', () => {
  it('a lone batch with one item the platform fails with a 500: exactly that item is rejected, the rest loads', async () => {
    const app = await fx.sb.createApp({ id: 'lonepoison', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    await fx.store.ensureJob('lonepoison', app.id)
    await fx.store.planItems('lonepoison', 'users', users(2))
    const msgs = messages(30, 2)
    // A NUL character cannot be stored: the sandbox answers the whole request 500, every time.
    ;(msgs[17] as { payload: { data: { text: string } } }).payload.data.text = 'poison \u0000 here'
    await fx.store.planItems('lonepoison', 'messages', msgs)
    const out = await load('lonepoison', app.id, app.baseUrl, app.apiKey, { maxAttempts: 2 })
    expect(out.status).toBe('rejected')
    const rejects = await fx.store.listRejects('lonepoison')
    expect(rejects.map((r) => r.targetKey)).toEqual(['m17'])
    // The sandbox commits the good rows before its 500 (the published bad-row answer): the loader
    // reads the batch back, sends the row that did not land alone, and rejects it on the
    // platform's 500 to that request, with the platform's code.
    expect(rejects[0]?.code).toBe('ERR_EXCEPTION')
    expect(rejects[0]?.message).toMatch(/refused this row alone: .*HTTP 500\): ERR_EXCEPTION/)
    const loaded = await sandboxKeys(fx.sb, app.id, 'messages')
    expect(loaded.size).toBe(29)
    expect(loaded.has('m17')).toBe(false)
  }, 60_000)
})

describe('credentials never cross a redirect', () => {
  it('a 307 to another origin: nothing reaches it, the run stops with a clear error, nothing rejected', async () => {
    const app = await job('redirect')
    const elsewhere = await faultyTarget((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{"data":{}}')
    })
    const origin = new URL(elsewhere.url).origin
    const t = await faultyTarget((req, res) => {
      res.writeHead(307, { location: `${origin}/v3${(req.url ?? '').replace(/^\/v3/, '')}?token=abc` })
      res.end()
    })
    const out = await load('redirect', app.id, t.url, app.apiKey)
    expect(t.seen.length).toBeGreaterThan(0)
    expect(t.seen.every((r) => r.headers.apikey === app.apiKey)).toBe(true)
    expect(elsewhere.seen.filter((r) => r.headers.apikey !== undefined)).toEqual([])
    expect(elsewhere.seen).toHaveLength(0)
    expect(out.status).toBe('failed')
    expect(out.error?.message).toMatch(/REDIRECT_REFUSED/)
    expect(out.error?.message).toContain(`HTTP 307 (redirect to ${origin})`)
    expect(out.error?.message).toMatch(/point the base URL at the final address/)
    expect(out.error?.message).not.toContain(app.apiKey)
    expect(out.error?.message).not.toContain('token=abc')
    const statuses = await itemStatuses('redirect')
    expect(statuses.rejected ?? 0).toBe(0)
    expect(statuses.done ?? 0).toBe(0)
  }, 60_000)
})
