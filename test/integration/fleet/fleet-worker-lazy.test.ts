/**
 * `fleet worker` (src/fleet/fleet-worker.ts) starts a tenant's loader only when the tenant has work,
 * on a real Postgres ledger and the sandbox over HTTP, in one process: a worker started before any
 * tenant is planned runs no loader (no run row, no process registered) for either tenant; once one
 * tenant is planned, the worker alone loads it — every key once, the other tenant's app untouched —
 * and its loader ends when the tenant has no work left; an update recorded later for that tenant
 * starts its loader again, which applies it; the second tenant, planned last, is served the same way.
 * A third tenant, whose key its platform refuses, has its loader stopped and started again after
 * the worker's rest, as long as it has work. Each tenant's lanes report to the fleet's metrics
 * (src/fleet/fleet-metrics.ts) under its labels: its import requests, and its update lane's counters.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.ts'
import { type FleetTenantJob, tenantContext, type TenantTicks } from '../../../src/fleet/fleet-run.ts'
import { serveFleet } from '../../../src/fleet/fleet-worker.ts'
import { parseConfig } from '../../../src/job/config.ts'
import { planFromSource } from '../../../src/job/plan-from-source.ts'
import { resolveLoadConfig } from '../../../src/load/config.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { ENTITIES } from '../../../src/target/schemas.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { expectedKeys, type TenantHistory, tenantSource, writeTenantLegacy } from '../../helpers/fleet-legacy.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

const QUOTA = 120
const WINDOW_MS = 2000
const HISTORY: TenantHistory = { users: 4, groups: 2, membersPerGroup: 3, messages: 60 }
const POLL_MS = 200
const IDLE_STOP_MS = 1000

let ledgerDb: TestDatabase
let sbx: TestSandbox
let store: LedgerStore
const tenants: FleetTenantJob[] = []
const apps = new Map<string, TestApp>()

beforeAll(async () => {
  ledgerDb = await createTestDatabase('cf_fleetlazy')
  sbx = await startTestSandbox()
  store = await openLedger({ url: ledgerDb.url, poolSize: 8 })
  const dir = mkdtempSync(join(tmpdir(), 'cf-fleetlazy-'))
  for (const id of ['alpha', 'beta', 'gamma']) {
    const app = await sbx.app({ requestsPerMinute: (QUOTA * WINDOW_MS) / 60_000, windowMs: WINDOW_MS })
    apps.set(id, app)
    const file = join(dir, `${id}.db`)
    writeTenantLegacy(file, id, HISTORY)
    const yaml = stringify({
      // gamma's key is not its app's: the platform refuses it (401), which stops its loader.
      target: {
        appId: app.id,
        region: 'us',
        apiKey: id === 'gamma' ? `${app.apiKey}x` : app.apiKey,
        baseUrl: app.baseUrl,
        quota: { requestsPerMinute: QUOTA },
      },
      state: { url: ledgerDb.url },
      source: tenantSource(file, id),
      load: { quotaWindowMs: WINDOW_MS, giveUpAfterMs: 10_000 },
    })
    const config = parseConfig(yaml, join(dir, `${id}.yaml`), {})
    tenants.push({ tenantId: id, jobId: `lazy_${id}`, config, load: resolveLoadConfig(config.load ?? {}, {}, {}) })
  }
})

afterAll(async () => {
  await store?.close()
  await sbx?.close()
  await ledgerDb?.drop()
})

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

async function until(what: string, test: () => Promise<boolean>, ms = 60_000): Promise<void> {
  const end = Date.now() + ms
  while (!(await test())) {
    expect(Date.now(), `waiting for ${what}`).toBeLessThan(end)
    await sleep(100)
  }
}

/** The items each tenant's app created, from the sandbox's request log (a key twice would show). */
async function created(tenantId: string): Promise<string[]> {
  const log = await sbx.sandbox.requests(apps.get(tenantId)!.id)
  return log
    .filter((e) => ENTITIES.includes(e.endpoint as never))
    .flatMap((e) => (e.items ?? []).filter((x) => x.result === 'created').map((x) => x.key))
}

/** The job's loader runs (a worker's loader writes one when it starts) and whether any is still running. */
async function loaderRuns(jobId: string): Promise<{ count: number; running: number }> {
  const runs = (await store.listRuns(jobId, 100)).filter((r) => r.mode === 'worker')
  return { count: runs.length, running: runs.filter((r) => r.status === 'running').length }
}

/** The three tenants served by one worker in this process, looking for work every POLL_MS. */
function serve(signal: AbortSignal, o: { restartAfterMs?: number; ticks?: TenantTicks } = {}): Promise<void> {
  return serveFleet({ store, tenants, logger: pino({ level: 'silent' }), signal, workPollMs: POLL_MS, idleStopAfterMs: IDLE_STOP_MS, ...o })
}

it('a worker started before any plan runs no loader; it serves a tenant once it has work, ends the loader when the work is done, and starts it again for an update', async () => {
  const [alpha, beta] = tenants as [FleetTenantJob, FleetTenantJob, FleetTenantJob]
  const stop = new AbortController()
  const metrics = createFleetMetrics({ fleetId: 'lazy', read: async () => ({ tenants: [], stats: new Map() }) })
  const serving = serve(stop.signal, { ticks: metrics })
  try {
    // Several looks at the ledger and no work: no loader for either tenant.
    await sleep(10 * POLL_MS)
    expect(await store.statusLookups.jobsWithWork([alpha.jobId, beta.jobId])).toEqual([])
    expect(await loaderRuns(alpha.jobId)).toEqual({ count: 0, running: 0 })
    expect(await loaderRuns(beta.jobId)).toEqual({ count: 0, running: 0 })

    // alpha planned: the worker, the only loading process, loads it; beta stays untouched.
    await planFromSource(tenantContext(alpha, store), { mode: 'full', logger: pino({ level: 'silent' }) })
    expect(await store.statusLookups.jobsWithWork([alpha.jobId, beta.jobId])).toEqual([alpha.jobId])
    const alphaKeys = expectedKeys('alpha', HISTORY).sort()
    await until('alpha loaded', async () => (await created('alpha')).length >= alphaKeys.length)
    expect((await created('alpha')).sort()).toEqual(alphaKeys)
    expect(await sbx.sandbox.requests(apps.get('beta')!.id)).toHaveLength(0)
    expect(await loaderRuns(beta.jobId)).toEqual({ count: 0, running: 0 })

    // No work left: alpha's loader ends (its run row finished, not left running).
    await until('alpha idle', async () => (await loaderRuns(alpha.jobId)).running === 0)
    expect(await store.statusLookups.jobsWithWork([alpha.jobId, beta.jobId])).toEqual([])
    const runsAfterLoad = (await loaderRuns(alpha.jobId)).count

    // An update of a loaded item is work too: a loader starts again and applies it.
    await store.updatePlan.record(alpha.jobId, 'users', [
      {
        kind: 'user.update',
        legacyId: 'u0',
        targetKey: 'alpha-u0',
        body: { name: 'Renamed' },
        policy: 'apply',
        reason: 'test',
        payloadHash: 'h-renamed',
      },
    ])
    expect(await store.statusLookups.jobsWithWork([alpha.jobId, beta.jobId])).toEqual([alpha.jobId])
    const db = inspectLedger(store)
    await until('the update applied', async () => {
      const r = await sql<{ status: string }>`select status from chatferry.updates where job_id = ${alpha.jobId}`.execute(db)
      return r.rows[0]?.status === 'done'
    })
    expect((await loaderRuns(alpha.jobId)).count).toBeGreaterThan(runsAfterLoad)

    // beta planned last: served the same way; alpha's keys still each once.
    await planFromSource(tenantContext(beta, store), { mode: 'full', logger: pino({ level: 'silent' }) })
    const betaKeys = expectedKeys('beta', HISTORY).sort()
    await until('beta loaded', async () => (await created('beta')).length >= betaKeys.length)
    expect((await created('beta')).sort()).toEqual(betaKeys)
    expect((await created('alpha')).sort()).toEqual(alphaKeys)
    for (const id of ['alpha', 'beta', 'gamma']) {
      expect(
        (await sbx.sandbox.requests(apps.get(id)!.id)).filter((e) => e.status === 429),
        id,
      ).toHaveLength(0)
    }
  } finally {
    stop.abort()
    await serving
  }
  // What each tenant's loaders did, counted under its labels: never more import requests than its app
  // received; the update lane's ledger errors (none) per tenant too.
  const families = parsePrometheusTextFormat(await metrics.registry.metrics())
  metrics.close()
  const value = (name: string, labels: Record<string, string>) => {
    const sample = families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    return sample?.value === undefined ? undefined : Number(sample.value)
  }
  for (const t of [alpha, beta]) {
    const labels = { fleet: 'lazy', tenant: t.tenantId, job_id: t.jobId }
    const imports = (await sbx.sandbox.requests(apps.get(t.tenantId)!.id)).filter((e) => ENTITIES.includes(e.endpoint as never))
    expect(value('chatferry_loader_requests_total', labels), t.tenantId).toBeGreaterThan(0)
    expect(value('chatferry_loader_requests_total', labels), t.tenantId).toBeLessThanOrEqual(imports.length)
    expect(value('chatferry_loader_ledger_errors_total', { ...labels, lane: 'update' }), t.tenantId).toBe(0)
  }
}, 120_000)

it("a tenant whose loader stops on its own (its key refused) is started again after the rest while it has work; the others' loaders are not touched", async () => {
  const gamma = tenants[2]!
  const stop = new AbortController()
  const serving = serve(stop.signal, { restartAfterMs: 500 })
  try {
    await planFromSource(tenantContext(gamma, store), { mode: 'full', logger: pino({ level: 'silent' }) })
    const failed = async () => (await store.listRuns(gamma.jobId, 100)).filter((r) => r.mode === 'worker' && r.status === 'failed').length
    await until('gamma started again after its loader failed', async () => (await failed()) >= 2, 30_000)
    expect(await created('gamma')).toEqual([])
    // Each start after a failure comes after the rest (500 ms), not at once.
    const starts = (await store.listRuns(gamma.jobId, 100))
      .filter((r) => r.mode === 'worker')
      .map((r) => r.startedAt.getTime())
      .sort((a, b) => a - b)
    expect(starts[1]! - starts[0]!).toBeGreaterThanOrEqual(500)
    // alpha and beta are done: no loader of theirs started meanwhile.
    for (const t of tenants.slice(0, 2)) {
      expect((await loaderRuns(t.jobId)).running, t.tenantId).toBe(0)
    }
  } finally {
    stop.abort()
    await serving
  }
}, 60_000)
