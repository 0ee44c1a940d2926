/**
 * The fleet run's core (src/fleet/fleet-run.ts) in one process, on a real Postgres ledger and the
 * sandbox over HTTP, with the tenants' job configurations written by hand (the fleet file's part is
 * fleet-provision's): three tenants, each into its own app at its own quota, one with a source that
 * does not exist — it fails alone, with its reason, and the others finish with exactly their data.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pino from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { runFleet } from '../../src/fleet/fleet-run.ts'
import { fleetExitCode } from '../../src/fleet/fleet-run-outcome.ts'
import { parseConfig } from '../../src/job/config.ts'
import { resolveLoadConfig } from '../../src/load/config.ts'
import { type LedgerStore, openLedger } from '../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { expectedKeys, tenantSource, writeTenantLegacy } from '../helpers/fleet-legacy.ts'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts'

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
    const yaml = stringify({
      target: { appId: app.id, region: 'us', apiKey: app.apiKey, baseUrl: app.baseUrl, quota: { requestsPerMinute: QUOTA } },
      state: { url: ledgerDb.url },
      source: tenantSource(id === 'broken' ? join(dir, 'missing', 'nowhere.db') : file, id),
      load: { quotaWindowMs: WINDOW_MS, giveUpAfterMs: 5000 },
    })
    const config = parseConfig(yaml, join(dir, `${id}.yaml`), {})
    tenants.push({ tenantId: id, jobId: `fleet.${id}`, config, load: resolveLoadConfig(config.load ?? {}, {}, {}) })
  }
  {
    const outcomes = await runFleet({
      store,
      tenants,
      mode: 'full',
      planConcurrency: 2,
      logger: pino({ level: 'silent' }),
      signal: new AbortController().signal,
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
}, 120_000)
