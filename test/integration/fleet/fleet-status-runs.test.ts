/**
 * `fleet status` (src/fleet/fleet-status.ts) on a real Postgres ledger: a tenant's state comes from
 * its newest `fleet run` attempt however many run rows fleet workers left after it (a worker's
 * loader leaves one each time it starts for new work, so a trickle of deltas leaves many).
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { tenantStatus } from '../../../src/fleet/fleet-status.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'

let db: TestDatabase
let store: LedgerStore

beforeAll(async () => {
  db = await createTestDatabase('cf_fleetstatus')
  store = await openLedger({ url: db.url, poolSize: 2 })
})

afterAll(async () => {
  await store?.close()
  await db?.drop()
})

it.each([
  { workerRuns: 0, state: 'done' },
  { workerRuns: 25, state: 'done' },
])('the fleet run finished, then $workerRuns worker loader runs: $state', async ({ workerRuns, state }) => {
  const jobId = `fleet_t${workerRuns}`
  await store.ensureJob(jobId, 'app1')
  const run = await store.startRun(jobId, 'run', 'host/1/fleet-run')
  await store.finishRun(run, 'succeeded', {})
  for (let i = 0; i < workerRuns; i++) {
    await store.finishRun(await store.startRun(jobId, 'worker', `host/2/loader${i}`), 'succeeded', {})
  }
  const s = await tenantStatus(
    store,
    { tenantId: `t${workerRuns}`, jobId, appId: 'app1', quota: { requestsPerMinute: 10, itemsPerRequest: 50 } },
    () => undefined,
    new Set([jobId]),
  )
  expect(s.state).toBe(state)
  expect(s.lastRun).toMatchObject({ id: run, mode: 'run', status: 'succeeded' })
})

it('an error older than the newest finished run is stale: not shown; a newer one is', async () => {
  const jobId = 'fleet_stale'
  await store.ensureJob(jobId, 'app1')
  const input = { tenantId: 'stale', jobId, appId: 'app1', quota: { requestsPerMinute: 10, itemsPerRequest: 50 } }
  const status = () => tenantStatus(store, input, () => undefined, new Set([jobId]))
  await store.finishRun(await store.startRun(jobId, 'worker', 'host/2/loader'), 'failed', {}, 'process died (host/2/loader)')
  await store.finishRun(await store.startRun(jobId, 'run', 'host/1/fleet-run'), 'failed', {}, 'the source refused the login')
  expect((await status()).lastError).toBe('the source refused the login')
  await store.finishRun(await store.startRun(jobId, 'run', 'host/1/fleet-run'), 'succeeded', {})
  expect((await status()).state).toBe('done')
  expect((await status()).lastError).toBeNull()
  await store.finishRun(await store.startRun(jobId, 'worker', 'host/3/loader'), 'failed', {}, 'the platform refused the key')
  expect((await status()).lastError).toBe('the platform refused the key')
})
