/**
 * Crash safety: `chatferry load` is SIGKILLed at random moments, again and again, then run to the
 * end; the sandbox then holds every planned item exactly once and nothing else.
 */
import { expect, it } from 'vitest'
import { ENTITIES, type Entity } from '../../src/target/schemas.ts'
import { groups, members, messages, runCli, users, writeConfig } from '../helpers/ledger-fixtures.ts'
import { testSecret } from '../helpers/secrets.ts'
import { useLoaderFixture, sandboxKeys } from '../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_crash')

it('SIGKILLed at random moments six times, then run to the end: every item present once, no extras', async () => {
  const app = await fx.sb.createApp({ id: 'crash', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 60, windowMs: 6000, faults: { latencyMs: { min: 0, max: 60 } } } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: fx.tdb.url, requestsPerMinute: 600, timeoutMs: 3000 })
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '6000', CHATFERRY_LOAD_LEASE_SECONDS: '8' }
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
    const want = new Set(plan[entity].map((p) => p.targetKey))
    expect(keys.size, `${entity}: count`).toBe(want.size)
    for (const [k, n] of keys) {
      expect(want.has(k), `${entity}: ${k} was planned`).toBe(true)
      expect(n, `${entity}: ${k} once`).toBe(1)
    }
  }
  const stats = await fx.store.entityStats('crash')
  for (const s of stats) expect(s.remaining).toBe(0)
  expect(stats.reduce((a, s) => a + s.rejected, 0)).toBe(0)
}, 120_000)
