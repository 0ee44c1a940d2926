/**
 * Crash safety: `chatferry load` is SIGKILLed at random moments, again and again, then run to the
 * end. The delivery audit (test/helpers/delivery-audit.ts) reads what the sandbox *received* and
 * proves that nothing was created twice or lost, and that nothing was sent again after an answer
 * beyond what the kills can explain (the batches in flight at each kill). A mutant of the ledger
 * (settlement silently discarded) shows the audit fails when the loader re-sends what it was told.
 */
import { sql } from 'kysely'
import { expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { createPlatformClient } from '../../../src/target/client.ts'
import { ENTITIES, type Entity } from '../../../src/target/schemas.ts'
import { auditDeliveries, describeViolations } from '../../helpers/delivery-audit.ts'
import { type CliRun, groups, members, messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'

const fx = useLoaderFixture('cf_crash')

/** `load.concurrency` of every loader here, set explicitly: the audit's bound depends on it. */
const CONCURRENCY = 4

it('SIGKILLed at random moments six times, then run to the end: nothing created twice, lost, or re-sent beyond the in-flight batches', async () => {
  const app = await fx.sb.createApp({
    id: 'crash',
    apiKey: testSecret('apikey'),
    settings: { requestsPerMinute: 60, windowMs: 6000, faults: { latencyMs: { min: 0, max: 60 } } },
  })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY) }
  const plan: Record<Entity, { targetKey: string }[]> = {
    users: users(80),
    groups: groups(5),
    members: members(80, 5),
    messages: messages(3000, 80),
  }
  await fx.store.ensureJob('crash', app.id)
  for (const entity of ENTITIES) {
    await fx.store.planItems('crash', entity, plan[entity] as never)
  }

  let kills = 0
  let seed = 42
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31
  for (let i = 0; i < 6; i++) {
    const run = runCli(['load', '--config', cfg], env)
    await run.waitFor('loader started', 20_000)
    await new Promise((r) => setTimeout(r, 150 + random() * 900))
    const killed = run.child.kill('SIGKILL')
    const res = await run.done
    if (killed && res.signal === 'SIGKILL') {
      kills++
    }
  }
  expect(kills).toBeGreaterThanOrEqual(5)
  // Something was loaded before the end, and something was left.
  const mid = await fx.store.entityStats('crash')
  expect(mid.reduce((a, s) => a + s.done, 0)).toBeGreaterThan(0)
  expect(mid.reduce((a, s) => a + s.remaining, 0)).toBeGreaterThan(0)

  const final = runCli(['load', '--config', cfg], env)
  const res = await final.done
  expect(res.code, res.stderr.slice(-2000)).toBe(0)

  for (const entity of ENTITIES) {
    const keys = await sandboxKeys(fx.sb, app.id, entity)
    expect(keys.size, `${entity}: count`).toBe(plan[entity].length)
  }
  // What was sent, not what is stored: created once, nothing lost, re-sends only for the kills.
  const report = await auditDeliveries({
    sb: fx.sb,
    appId: app.id,
    ledger: inspectLedger(fx.store),
    jobId: 'crash',
    kills,
    concurrency: CONCURRENCY,
    timeoutMs: 3000,
  })
  expect(report.violations, describeViolations(report)).toEqual([])
  const stats = await fx.store.entityStats('crash')
  for (const s of stats) {
    expect(s.remaining).toBe(0)
  }
  expect(stats.reduce((a, s) => a + s.rejected, 0)).toBe(0)
}, 120_000)

/**
 * One kill and a rerun: 1000 users (20 batches) and 500 messages; `load` is SIGKILLed once the
 * sandbox has received 12 requests, then run again. With `mutant`, the ledger silently discards
 * every settlement of the job (a trigger: BEFORE UPDATE … RETURN NULL when a batch becomes
 * `settled` or an item `done`), so the loader never learns what the platform answered; the rerun
 * is stopped (SIGTERM, not a kill) once it has sent 20 more requests, since it would never drain.
 */
async function killOnceThenRerun(id: string, mutant: boolean) {
  const app = await fx.sb.createApp({
    id,
    apiKey: testSecret('apikey'),
    settings: { requestsPerMinute: 60, windowMs: 6000, faults: { latencyMs: { min: 0, max: 60 } } },
  })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY) }
  await fx.store.ensureJob(id, app.id)
  await fx.store.planItems(id, 'users', users(1000))
  await fx.store.planItems(id, 'messages', messages(500, 1000))
  if (mutant) {
    await sql`create or replace function chatferry.mutant_discard_settlement() returns trigger language plpgsql as $$
      begin
        if new.job_id = ${sql.lit(id)} and new.status in ('settled', 'done') and old.status is distinct from new.status then return null; end if;
        return new;
      end $$`.execute(inspectLedger(fx.store))
    await sql`create trigger mutant_discard_settlement before update on chatferry.batches for each row execute function chatferry.mutant_discard_settlement()`.execute(
      inspectLedger(fx.store),
    )
    await sql`create trigger mutant_discard_settlement before update on chatferry.items for each row execute function chatferry.mutant_discard_settlement()`.execute(
      inspectLedger(fx.store),
    )
  }
  /** Resolves once the sandbox has logged `n` requests of the app (or after `ms`, whatever came first). */
  const requestsReach = async (n: number, ms: number) => {
    const until = Date.now() + ms
    while (Date.now() < until && (await fx.sb.requests(app.id)).length < n) {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  /** Resolves once the sandbox stores `n` users of the app (or after `ms`): a loaded machine is slower than the request count. */
  const usersStored = async (n: number, ms: number) => {
    const until = Date.now() + ms
    while (Date.now() < until && (await sandboxKeys(fx.sb, app.id, 'users')).size < n) {
      await new Promise((r) => setTimeout(r, 100))
    }
  }
  const runs: CliRun[] = []
  try {
    const first = runCli(['load', '--config', cfg], env)
    runs.push(first)
    await first.waitFor('loader started', 20_000)
    await requestsReach(12, 20_000)
    const killed = first.child.kill('SIGKILL')
    const res1 = await first.done
    let kills = killed && res1.signal === 'SIGKILL' ? 1 : 0
    const second = runCli(['load', '--config', cfg], env)
    runs.push(second)
    let hardStop: NodeJS.Timeout | undefined
    if (mutant) {
      await second.waitFor('loader started', 20_000)
      // Every user stored (the claim below about the old check) and 20 requests beyond the first run's.
      await usersStored(1000, 40_000)
      await requestsReach(32, 20_000)
      second.child.kill('SIGTERM')
      // A graceful stop waits for the requests in flight; should it hang, end it (and count it as a kill).
      hardStop = setTimeout(() => second.child.kill('SIGKILL'), 15_000)
    }
    const res2 = await second.done
    clearTimeout(hardStop)
    if (res2.signal === 'SIGKILL') {
      kills++
    }
    const report = await auditDeliveries({
      sb: fx.sb,
      appId: app.id,
      ledger: inspectLedger(fx.store),
      jobId: id,
      kills,
      concurrency: CONCURRENCY,
      timeoutMs: 3000,
    })
    return { kills, res2, report }
  } finally {
    for (const r of runs) {
      if (r.child.exitCode === null && r.child.signalCode === null) {
        r.child.kill('SIGKILL')
      }
    }
    if (mutant) {
      await sql`drop trigger if exists mutant_discard_settlement on chatferry.batches`.execute(inspectLedger(fx.store))
      await sql`drop trigger if exists mutant_discard_settlement on chatferry.items`.execute(inspectLedger(fx.store))
    }
  }
}

it('control: the mutant scenario (one kill, a rerun) with settlement intact passes the audit', async () => {
  const { kills, res2, report } = await killOnceThenRerun('control', false)
  expect(kills).toBe(1)
  expect(res2.code, res2.stderr.slice(-2000)).toBe(0)
  expect(report.violations, describeViolations(report)).toEqual([])
}, 60_000)

it('mutant: settlement disabled → the audit must fail', async () => {
  const { kills, report } = await killOnceThenRerun('mutant', true)
  expect(kills).toBeGreaterThanOrEqual(1)
  // The sandbox still holds every user once: the old "present once" check would have passed.
  const stored = await sandboxKeys(fx.sb, 'mutant', 'users')
  expect(stored.size).toBe(1000)
  expect([...stored.values()].every((n) => n === 1)).toBe(true)
  // The audit does not: the rerun sent again what the platform had answered, beyond one kill's in-flight batches.
  const beyond = report.violations.find((v) => v.kind === 'resent-beyond-bound')
  expect(beyond, describeViolations(report)).toBeDefined()
  expect(report.stats.unexplainedResends).toBeGreaterThan(report.stats.bound)
  expect(report.stats.bound).toBe(kills * CONCURRENCY * 50)
}, 90_000)

/**
 * A batch of 50 messages, one with a sender the platform does not know: its request writes the 49
 * good rows and answers 500 `ERR_EXCEPTION`, and the loader reads the batch back through the chat
 * interface. The sandbox app's chat limit is cut to one request a window once the loader has
 * started, so the read-back waits on a 429, and the loader is SIGKILLed there. The rerun takes the batch over,
 * sends it again (the 49 answer "already exists", never a second copy; the bad row fails it the same
 * way), reads it back, and ends as an uninterrupted run does: 49 done, the bad row sent alone and rejected.
 */
it('SIGKILLed while reading a batch back after a bad-row 500: the rerun ends the same way, nothing created twice', async () => {
  // A 10 s window: the chat 429 names a wait of a few seconds, which pauses the app's chat budget
  // row in the ledger, so the rerun waits out what is left of it.
  const app = await fx.sb.createApp({ id: 'readback', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 100, windowMs: 10_000 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY) }
  await fx.store.ensureJob('readback', app.id)
  await fx.store.planItems('readback', 'users', users(6))
  const msgs = messages(50, 6)
  for (const [i, m] of msgs.entries()) {
    const p = m.payload as { sender: string; data: Record<string, unknown> }
    if (i % 2 === 0) {
      p.data.metadata = { legacy: { id: m.legacyId } }
    }
    if (m.targetKey === 'm7') {
      p.sender = 'ghost'
    }
  }
  await fx.store.planItems('readback', 'messages', msgs)
  const ledger = inspectLedger(fx.store)

  const first = runCli(['load', '--config', cfg], env)
  let kills: number
  try {
    await first.waitFor('loader started', 20_000)
    // The start-up check of the key has read the chat interface already; one more request fills the window.
    await fx.sb.settings(app.id, { chatRequestsPerMinute: 1 })
    await createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
      .listMessages({ limit: 1 })
      .catch(() => {})
    const until = Date.now() + 20_000
    while (Date.now() < until && !(await fx.sb.requests(app.id)).some((r) => r.endpoint === 'messages' && r.status === 500)) {
      await new Promise((r) => setTimeout(r, 50))
    }
    await new Promise((r) => setTimeout(r, 500))
    // Reading back: the batch is still open under the loader's lease, its rows still `sent`.
    const batch = await sql<{ status: string; leased: boolean }>`
      select status, lease_token is not null as leased from chatferry.batches where job_id = 'readback' and entity = 'messages'`.execute(ledger)
    expect(batch.rows).toEqual([{ status: 'open', leased: true }])
    const items = await sql<{ status: string; n: number }>`
      select status, count(*)::int as n from chatferry.items where job_id = 'readback' and entity = 'messages' group by status`.execute(ledger)
    expect(items.rows).toEqual([{ status: 'sent', n: 50 }])
    expect(first.child.kill('SIGKILL')).toBe(true)
    const res1 = await first.done
    kills = res1.signal === 'SIGKILL' ? 1 : 0
    // It died inside the read-back: the read-back's own line (written when it ends) never came.
    expect(res1.stderr).not.toContain('read back a message batch')
  } finally {
    first.child.kill('SIGKILL')
  }
  expect(kills).toBe(1)

  await fx.sb.settings(app.id, { chatRequestsPerMinute: 10_000 })
  const second = await runCli(['load', '--config', cfg], env).done
  expect(second.code, second.stderr.slice(-2000)).toBe(3)
  await fx.sb.whenIdle()
  const log = (await fx.sb.requests(app.id)).filter((r) => r.endpoint === 'messages')
  expect(log.map((r) => [r.itemCount, r.status, r.code, r.committed])).toEqual([
    [50, 500, 'ERR_EXCEPTION', 49],
    [50, 500, 'ERR_EXCEPTION', 0],
    [1, 500, 'ERR_EXCEPTION', 0],
  ])
  const created = log.flatMap((r) => (r.items ?? []).filter((i) => i.result === 'created').map((i) => i.key))
  expect(created).toHaveLength(49)
  expect(new Set(created).size).toBe(49)
  expect(created).not.toContain('m7')
  const rejects = await fx.store.listRejects('readback')
  expect(rejects.map((r) => [r.targetKey, r.code])).toEqual([['m7', 'ERR_EXCEPTION']])
  const m = (await fx.store.entityStats('readback')).find((s) => s.entity === 'messages')
  expect(m).toMatchObject({ done: 49, created: 49, rejected: 1, remaining: 0 })
  const report = await auditDeliveries({ sb: fx.sb, appId: app.id, ledger, jobId: 'readback', kills, concurrency: CONCURRENCY, timeoutMs: 3000 })
  expect(report.violations, describeViolations(report)).toEqual([])
}, 90_000)
