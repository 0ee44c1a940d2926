/**
 * The fleet run's core (src/fleet/fleet-run.ts) in one process, on a real Postgres ledger and the
 * sandbox over HTTP, with the tenants' job configurations written by hand (the fleet file's part is
 * fleet-provision's): three tenants, each into its own app at its own quota, one with a source that
 * does not exist — it fails alone, with its reason, and the others finish with exactly their data.
 * Each tenant's lanes report to the fleet's metrics (src/fleet/fleet-metrics.ts): acme re-hosts one
 * file into a local store, and its files lane's copy and bytes are counted under its tenant labels;
 * every lane's counters (the import and update lanes' ledger errors) are there per tenant.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import parsePrometheusTextFormat from 'parse-prometheus-text-format'
import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.ts'
import { runFleet } from '../../../src/fleet/fleet-run.ts'
import { fleetExitCode } from '../../../src/fleet/fleet-run-outcome.ts'
import { parseConfig } from '../../../src/job/config.ts'
import { resolveLoadConfig } from '../../../src/load/config.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { pngBytes } from '../../helpers/file-server.ts'
import { expectedKeys, tenantSource, writeTenantLegacy } from '../../helpers/fleet-legacy.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let ledgerDb: TestDatabase
let sbx: TestSandbox
let store: LedgerStore

beforeAll(async () => {
  ledgerDb = await createTestDatabase('cf_fleetcore')
  sbx = await startTestSandbox()
  store = await openLedger({ url: ledgerDb.url, poolSize: 8 })
})

afterAll(async () => {
  await store?.close()
  await sbx?.close()
  await ledgerDb?.drop()
})

const QUOTA = 120
const WINDOW_MS = 2000
const CHART_BYTES = 1500

/** acme's source and job with one file on line 7 (`chart.png` in `dir`), re-hosted into a local store. */
function withAFile(file: string, dir: string, source: Record<string, unknown>): Record<string, unknown> {
  writeFileSync(join(dir, 'chart.png'), pngBytes(CHART_BYTES))
  const db = new DatabaseSync(file)
  db.exec(`ALTER TABLE lines ADD COLUMN files TEXT;
    UPDATE lines SET files = '[{"url":"https://files.example.com/chart.png","mimeType":"image/png","size":${CHART_BYTES},"path":"chart.png"}]' WHERE id = 7`)
  db.close()
  const entities = source.entities as { messages: { query: string } }
  return {
    source: {
      ...source,
      entities: {
        ...entities,
        messages: { ...entities.messages, query: entities.messages.query.replace(' FROM lines', ', files AS attachments FROM lines') },
      },
      files: { kind: 'local', field: 'path', directory: dir },
    },
    files: {
      mode: 'rehost',
      store: { kind: 'local', directory: mkdtempSync(join(tmpdir(), 'cf-fleetcore-store-')), publicBaseUrl: 'https://files.acme.example' },
    },
  }
}

it('three tenants load in parallel, each into its own app within its quota; a tenant with a missing source fails alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'cf-fleetcore-'))
  const history = { users: 6, groups: 2, membersPerGroup: 4, messages: 60 }
  const tenants = []
  const apps = []
  for (const id of ['acme', 'globex', 'broken']) {
    const app = await sbx.app({ requestsPerMinute: (QUOTA * WINDOW_MS) / 60_000, windowMs: WINDOW_MS })
    apps.push(app)
    const file = join(dir, `${id}.db`)
    if (id !== 'broken') {
      writeTenantLegacy(file, id, history)
    }
    const source = tenantSource(id === 'broken' ? join(dir, 'missing', 'nowhere.db') : file, id)
    const yaml = stringify({
      target: { appId: app.id, region: 'us', apiKey: app.apiKey, baseUrl: app.baseUrl, quota: { requestsPerMinute: QUOTA } },
      state: { url: ledgerDb.url },
      source,
      load: { quotaWindowMs: WINDOW_MS, giveUpAfterMs: 5000 },
      ...(id === 'acme' ? withAFile(file, dir, source) : {}),
    })
    const config = parseConfig(yaml, join(dir, `${id}.yaml`), {})
    tenants.push({ tenantId: id, jobId: `fleet.${id}`, config, load: resolveLoadConfig(config.load ?? {}, {}, {}) })
  }
  const metrics = createFleetMetrics({ fleetId: 'core', read: async () => ({ tenants: [], stats: new Map() }) })
  {
    const outcomes = await runFleet({
      store,
      tenants,
      mode: 'full',
      planConcurrency: 2,
      logger: pino({ level: 'silent' }),
      signal: new AbortController().signal,
      ticks: metrics,
    })
    const by = new Map(outcomes.map((o) => [o.tenantId, o]))
    expect(by.get('acme')?.state, by.get('acme')?.reason).toBe('done')
    expect(by.get('globex')?.state, by.get('globex')?.reason).toBe('done')
    expect(by.get('broken')?.state).toBe('failed')
    expect(by.get('broken')?.reason).toMatch(/nowhere\.db|unable to open|SOURCE/i)
    expect(fleetExitCode(outcomes)).toBeGreaterThan(0)

    // Each app holds exactly its tenant's items; the broken tenant's app got no request.
    for (const [i, id] of ['acme', 'globex'].entries()) {
      const log = await sbx.sandbox.requests(apps[i]!.id)
      const keys = log.flatMap((e) => (e.items ?? []).filter((x) => x.result === 'created').map((x) => x.key))
      expect(keys.sort()).toEqual(expectedKeys(id, history).sort())
      // The quota held: no window of the app saw more than its requests.
      const times = log.filter((e) => e.endpoint !== 'webhooks').map((e) => e.receivedAtMs)
      const perWindow = Math.round((QUOTA * WINDOW_MS) / 60_000)
      for (const t of times) {
        expect(times.filter((x) => x >= t && x < t + WINDOW_MS).length).toBeLessThanOrEqual(perWindow)
      }
      expect(log.filter((e) => e.status === 429)).toHaveLength(0)
    }
    expect(await sbx.sandbox.requests(apps[2]!.id)).toHaveLength(0)
    const brokenRuns = await store.listRuns('fleet.broken')
    expect(brokenRuns.map((r) => [r.mode, r.status])).toEqual([['run', 'failed']])
    expect(brokenRuns[0]?.error).toBeTruthy()
    // One tenant run, one row (src/job/job-run.ts): its plan and its loader's counters in it, no row of the loader's own.
    for (const id of ['acme', 'globex']) {
      const runs = await store.listRuns(`fleet.${id}`)
      expect(
        runs.map((r) => [r.mode, r.status, r.finishedAt !== null]),
        id,
      ).toEqual([['run', 'succeeded', true]])
      expect(runs[0]?.stats, id).toMatchObject({ plan: { entities: expect.any(Object) }, counters: { requests: expect.any(Number) } })
      expect((runs[0]?.stats as { counters: { requests: number } }).counters.requests, id).toBeGreaterThan(0)
    }
  }
  // Each tenant's lanes, counted under its labels: acme's one file copied, globex's none; both lanes' ledger errors.
  const families = parsePrometheusTextFormat(await metrics.registry.metrics())
  metrics.close()
  const value = (name: string, labels: Record<string, string>) => {
    const sample = families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
    return sample?.value === undefined ? undefined : Number(sample.value)
  }
  const acme = { fleet: 'core', tenant: 'acme', job_id: 'fleet.acme' }
  const globex = { fleet: 'core', tenant: 'globex', job_id: 'fleet.globex' }
  expect(value('chatferry_files_copied_total', { ...acme, how: 'uploaded' })).toBe(1)
  expect(value('chatferry_files_copied_bytes_total', acme)).toBe(CHART_BYTES)
  expect(value('chatferry_files_attempts_failed_total', { ...acme, then: 'failed' })).toBe(0)
  expect(value('chatferry_files_copied_bytes_total', globex)).toBeUndefined()
  for (const labels of [acme, globex]) {
    expect(value('chatferry_loader_requests_total', labels)).toBeGreaterThan(0)
    expect(value('chatferry_loader_ledger_errors_total', { ...labels, lane: 'import' })).toBe(0)
    expect(value('chatferry_loader_ledger_errors_total', { ...labels, lane: 'update' })).toBe(0)
  }
}, 120_000)
