/**
 * Scale-out: three `chatferry worker` processes drain one job through pg-boss and one shared quota
 * budget; one is SIGKILLed mid-run and its batches are taken over. The sandbox's request log shows
 * the app's quota was never exceeded across them, and the delivery audit (what the sandbox
 * received) shows nothing created twice or lost, and nothing sent again after an answer beyond the
 * killed worker's batches in flight.
 */
import { expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { ENTITIES, type Entity } from '../../../src/target/schemas.ts'
import { auditDeliveries, describeViolations } from '../../helpers/delivery-audit.ts'
import { type CliRun, groups, members, messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { maxInWindow, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'

const fx = useLoaderFixture('cf_workers')

it('3 workers, one SIGKILLed mid-run: quota never exceeded across them, nothing re-sent beyond its in-flight batches', async () => {
  const WINDOW = 3000
  const LIMIT = 30 // per window = 600/min
  const CONCURRENCY = 3 // per worker; the audit's bound depends on it
  const app = await fx.sb.createApp({
    id: 'workers',
    apiKey: testSecret('apikey'),
    settings: { requestsPerMinute: LIMIT, windowMs: WINDOW, faults: { latencyMs: { min: 5, max: 80 } } },
  })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  // The window is compressed 20× (3 s for the platform's 60 s); the jitter of a saturated 2-core CI
  // host (three workers, the sandbox and other test files) is not: a process stalled a few hundred
  // ms puts requests of earlier slots into a later window. One CI run saw 4 requests too many with
  // the default guard (250 ms here); part of it was the budget's own doing (a reservation queued
  // behind the row lock waited from a stale clock: test/integration/state/quota-slot-clock.test.ts).
  // The guard is absolute time, so this test keeps 750 ms (the product's default at 60 s is 600 ms).
  // It still proves the budget is shared: three unshared budgets would send 75 a window.
  const env = {
    CHATFERRY_LOAD_QUOTA_WINDOW_MS: String(WINDOW),
    CHATFERRY_LOAD_QUOTA_GUARD_MS: '750',
    CHATFERRY_LOAD_LEASE_SECONDS: '8',
    CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY),
  }
  const plan: Record<Entity, { targetKey: string }[]> = {
    users: users(100),
    groups: groups(5),
    members: members(100, 5),
    messages: messages(3500, 100),
  }
  await fx.store.ensureJob('workers', app.id)
  for (const entity of ENTITIES) {
    await fx.store.planItems('workers', entity, plan[entity] as never)
  }

  const workers: CliRun[] = [0, 1, 2].map(() => runCli(['worker', '--config', cfg], env))
  await Promise.all(workers.map((w) => w.waitFor('loader started', 20_000)))
  // Let all three work for a while, then kill one in the middle of the run.
  await new Promise((r) => setTimeout(r, 2500))
  const before = await fx.store.entityStats('workers')
  expect(before.reduce((a, s) => a + s.remaining, 0)).toBeGreaterThan(0)
  workers[1]?.child.kill('SIGKILL')
  const killed = await workers[1]?.done
  expect(killed?.signal).toBe('SIGKILL')

  const deadline = Date.now() + 60_000
  for (;;) {
    const stats = await fx.store.entityStats('workers')
    if (stats.every((s) => s.remaining === 0)) {
      break
    }
    if (Date.now() > deadline) {
      throw new Error(`not drained: ${JSON.stringify(stats.map((s) => [s.entity, s.remaining]))}`)
    }
    await new Promise((r) => setTimeout(r, 250))
  }
  for (const w of [workers[0], workers[2]]) {
    w?.child.kill('SIGTERM')
  }
  const exits = await Promise.all([workers[0]?.done, workers[2]?.done])
  for (const e of exits) {
    expect(e?.code, e?.stderr.slice(-1500)).toBe(0)
  }

  await fx.sb.whenIdle()
  const log = await fx.sb.requests(app.id)
  // Every live worker sent something (the work was shared).
  expect(log.filter((r) => r.status === 429)).toHaveLength(0)
  expect(
    maxInWindow(
      log.map((r) => r.receivedAtMs),
      WINDOW,
    ),
  ).toBeLessThanOrEqual(LIMIT)

  for (const entity of ENTITIES) {
    const keys = await sandboxKeys(fx.sb, app.id, entity)
    expect(keys.size, `${entity}: count`).toBe(plan[entity].length)
  }
  // What was sent: created once, nothing lost, and only the killed worker's in-flight batches went twice.
  const report = await auditDeliveries({
    sb: fx.sb,
    appId: app.id,
    ledger: inspectLedger(fx.store),
    jobId: 'workers',
    kills: 1,
    concurrency: CONCURRENCY,
    timeoutMs: 3000,
  })
  expect(report.violations, describeViolations(report)).toEqual([])
  const { sql } = await import('kysely')
  const owners = await sql<{
    n: number
  }>`select count(distinct split_part(lease_owner, '/', 2))::int as n from chatferry.batches where job_id = 'workers'`.execute(
    inspectLedger(fx.store),
  )
  expect(owners.rows[0]?.n).toBeGreaterThanOrEqual(2)
}, 120_000)
