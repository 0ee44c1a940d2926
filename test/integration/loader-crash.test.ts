/**
 * Crash safety: `chatferry load` is SIGKILLed at random moments, again and again, then run to the
 * end. The delivery audit (test/helpers/delivery-audit.ts) reads what the sandbox *received* and
 * proves that nothing was created twice or lost, and that nothing was sent again after an answer
 * beyond what the kills can explain (the batches in flight at each kill).
 */
import { expect, it } from 'vitest'
import { ENTITIES, type Entity } from '../../src/target/schemas.ts'
import { groups, members, messages, runCli, users, writeConfig } from '../helpers/ledger-fixtures.ts'
import { testSecret } from '../helpers/secrets.ts'
import { useLoaderFixture, sandboxKeys } from '../helpers/loader-harness.ts'
import { auditDeliveries, describeViolations } from '../helpers/delivery-audit.ts'

const fx = useLoaderFixture('cf_crash')

/** `load.concurrency` of every loader here, set explicitly: the audit's bound depends on it. */
const CONCURRENCY = 4

it('SIGKILLed at random moments six times, then run to the end: nothing created twice, lost, or re-sent beyond the in-flight batches', async () => {
  const app = await fx.sb.createApp({ id: 'crash', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 60, windowMs: 6000, faults: { latencyMs: { min: 0, max: 60 } } } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8', CHATFERRY_LOAD_CONCURRENCY: String(CONCURRENCY) }
  const plan: Record<Entity, { targetKey: string }[]> = {
    users: users(80),
    groups: groups(5),
    members: members(80, 5),
    messages: messages(3000, 80),
  }
  await fx.store.ensureJob('crash', app.id)
  for (const entity of ENTITIES) await fx.store.planItems('crash', entity, plan[entity] as never)

  let kills = 0
  let seed = 42
  const random = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31)
  for (let i = 0; i < 6; i++) {
    const run = runCli(['load', '--config', cfg], env)
    await run.waitFor('loader started', 20_000)
    await new Promise((r) => setTimeout(r, 150 + random() * 900))
    const killed = run.child.kill('SIGKILL')
    const res = await run.done
    if (killed && res.signal === 'SIGKILL') kills++
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
  const report = await auditDeliveries({ sb: fx.sb, appId: app.id, ledger: fx.store.db, jobId: 'crash', kills, concurrency: CONCURRENCY, timeoutMs: 3000 })
  expect(report.violations, describeViolations(report)).toEqual([])
  const stats = await fx.store.entityStats('crash')
  for (const s of stats) expect(s.remaining).toBe(0)
  expect(stats.reduce((a, s) => a + s.rejected, 0)).toBe(0)
}, 120_000)

