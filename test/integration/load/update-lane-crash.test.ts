/**
 * Crash safety of the update lane, proven from what the sandbox *received*: `chatferry load` is
 * SIGKILLed while the answer of an applied update is held back by a proxy (the platform has applied
 * it, the ledger knows it only as `sent`), then run again. Every update must reach the platform
 * exactly once — none lost, none applied twice — which only holds because an update found `sent`
 * with its holder gone is checked against the platform before anything is sent again. A mutant of
 * the ledger (a trigger that makes it forget the `sent` mark, so the rerun cannot know the call
 * went out) shows the audit fails when that rule is broken: the held update is applied twice.
 */
import { sql } from 'kysely'
import { afterEach, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { UpdateIntent } from '../../../src/state/update-plan-ledger.ts'
import { createPlatformClient } from '../../../src/target/client.ts'
import { type HoldingProxy, startHoldingProxy } from '../../helpers/holding-proxy.ts'
import { type CliRun, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, useLoaderFixture } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'
import { duplicates, ledgerUpdates, receivedWrites } from '../../helpers/update-lane-harness.ts'

const fx = useLoaderFixture('cf_lane_crash')
const N = 24
const cleanups: (() => Promise<void>)[] = []

afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) {
    await c().catch(() => {})
  }
})

/** A sandbox app with `n` users loaded through the import lane, then one rename planned per user. */
async function loadedUsersWithRenames(jobId: string, n: number, rename: (u: { targetKey: string }) => Pick<UpdateIntent, 'body' | 'payloadHash'>) {
  const app = await fx.sb.createApp({ id: jobId, apiKey: testSecret('apikey'), settings: { requestsPerMinute: 6000 } })
  await fx.store.ensureJob(jobId, app.id)
  await fx.store.planItems(jobId, 'users', users(n))
  expect(
    (
      await loadOnce({
        store: fx.store,
        stateUrl: fx.tdb.url,
        jobId,
        appId: app.id,
        baseUrl: app.baseUrl,
        apiKey: app.apiKey,
        requestsPerMinute: 6000,
      })
    ).status,
  ).toBe('done')
  const renames: UpdateIntent[] = users(n).map((u) => ({
    kind: 'user.update',
    legacyId: u.legacyId,
    targetKey: u.targetKey,
    policy: 'apply',
    reason: 'changed: name',
    ...rename(u),
  }))
  await fx.store.updatePlan.record(jobId, 'users', renames)
  return app
}

async function killDuringTheLane(jobId: string, mutant: boolean) {
  const app = await loadedUsersWithRenames(jobId, N, (u) => ({ body: { name: `Renamed ${u.targetKey}` }, payloadHash: `h-${u.targetKey}` }))
  const db = inspectLedger(fx.store)
  if (mutant) {
    await sql`create or replace function chatferry.mutant_forget_sent() returns trigger language plpgsql as $$
      begin
        if new.job_id = ${sql.lit(jobId)} and new.status = 'sent' then new.status := old.status; end if;
        return new;
      end $$`.execute(db)
    await sql`create trigger mutant_forget_sent before update on chatferry.updates for each row execute function chatferry.mutant_forget_sent()`.execute(
      db,
    )
    cleanups.push(async () => void (await sql`drop trigger if exists mutant_forget_sent on chatferry.updates`.execute(db)))
  }

  const upstream = new URL(app.baseUrl)
  const proxy: HoldingProxy = await startHoldingProxy(upstream.origin, 4000)
  cleanups.push(() => proxy.close())
  proxy.hold = (method, path) => method === 'PUT' && /\/users\/[^/?]+/.test(path)
  const cfg = writeConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: `${proxy.origin}${upstream.pathname}`,
    stateUrl: fx.tdb.url,
    requestsPerMinute: 600,
    timeoutMs: 3000,
  })
  const env = { CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: '2' }
  const runs: CliRun[] = []
  cleanups.push(async () => {
    for (const r of runs) {
      if (r.child.exitCode === null && r.child.signalCode === null) {
        r.child.kill('SIGKILL')
      }
    }
  })
  // Let five renames through (their answers held 4 s each), then kill while the next ones are held.
  const first = runCli(['load', '--config', cfg], env)
  runs.push(first)
  await proxy.held(6, 60_000)
  const heldAtKill = (await receivedWrites(fx.sb, app.id)).length
  first.child.kill('SIGKILL')
  const r1 = await first.done
  expect(r1.signal).toBe('SIGKILL')
  const midway = await ledgerUpdates(fx.store, jobId)
  proxy.hold = undefined
  const second = runCli(['load', '--config', cfg], env)
  runs.push(second)
  const r2 = await second.done
  return { app, r2, heldAtKill, midway, writes: await receivedWrites(fx.sb, app.id) }
}

it('SIGKILL while applied updates wait for their answers, then a rerun: every update reaches the platform exactly once', async () => {
  const { app, r2, heldAtKill, midway, writes } = await killDuringTheLane('crash', false)
  expect(r2.code, r2.stderr.slice(-3000)).toBe(0)
  // The kill left updates the platform had applied but the ledger had only as sent.
  expect(heldAtKill).toBeGreaterThanOrEqual(6)
  expect(midway.filter((u) => u.status === 'sent').length).toBeGreaterThanOrEqual(1)
  // What the platform received: each rename once, none missing, nothing else.
  expect(duplicates(writes)).toEqual([])
  expect(writes.map((w) => w.call).sort()).toEqual(
    users(N)
      .map((u) => `users.update ${u.targetKey}`)
      .sort(),
  )
  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  for (const u of users(N)) {
    expect((await client.findUser(u.targetKey))?.name).toBe(`Renamed ${u.targetKey}`)
  }
  const ledger = await ledgerUpdates(fx.store, 'crash')
  expect(ledger.every((u) => u.status === 'done')).toBe(true)
  // The ones applied before the kill were confirmed by a read, not sent again.
  expect(ledger.filter((u) => u.http_status === null).length).toBeGreaterThanOrEqual(1)
}, 120_000)

it('mutant: a ledger that forgets the sent mark → the rerun applies the held update again, and the audit sees it', async () => {
  const { r2, writes } = await killDuringTheLane('mutant', true)
  expect(r2.code, r2.stderr.slice(-3000)).toBe(0)
  expect(duplicates(writes).length).toBeGreaterThanOrEqual(1)
}, 120_000)

it('a worker serves the update lane too: the planned updates are applied once each, SIGTERM ends it with exit 0', async () => {
  const jobId = 'worker'
  const app = await loadedUsersWithRenames(jobId, 6, (u) => ({ body: { name: `W ${u.targetKey}` }, payloadHash: null }))
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const worker = runCli(['worker', '--config', cfg], { CHATFERRY_JOB_ID: jobId })
  cleanups.push(async () => void (worker.child.exitCode === null && worker.child.kill('SIGKILL')))
  const until = Date.now() + 30_000
  while (Date.now() < until && (await ledgerUpdates(fx.store, jobId)).some((u) => u.status !== 'done')) {
    await new Promise((r) => setTimeout(r, 200))
  }
  worker.child.kill('SIGTERM')
  const res = await worker.done
  expect(res.code, res.stderr.slice(-3000)).toBe(0)
  const writes = await receivedWrites(fx.sb, app.id)
  expect(duplicates(writes)).toEqual([])
  expect(writes.map((w) => w.call).sort()).toEqual(
    users(6)
      .map((u) => `users.update ${u.targetKey}`)
      .sort(),
  )
}, 90_000)
