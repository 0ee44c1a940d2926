/**
 * `chatferry run` on a Zulip source killed with SIGKILL while it reads (plans) and twice while it
 * loads, then run again to completion: the sandbox holds exactly what the fixture and the policies
 * predict, item by item, nothing missing and nothing twice. A realm of a few thousand generated
 * messages (plus the hand-made fixture's rows, bad ones included), small source pages and a small
 * quota with a short window make both phases last a few seconds.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../mappings/index.ts'
import { expectedZulip } from '../fixtures/zulip/expected.ts'
import { largeZulipSeed } from '../fixtures/zulip/generate.ts'
import { loadZulipFixture } from '../fixtures/zulip/load.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { type CliRun, runCli } from '../helpers/ledger-fixtures.ts'
import { dropWithin } from '../helpers/loader-harness.ts'
import { compareWithExpected, countsOf, expectMigration, sandboxContents, writeRunConfig } from '../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, bots: { mode: 'skip' }, archivedGroups: { mode: 'skip' } }
const WINDOW_MS = 2000
const PER_WINDOW = 60
const RPM = (PER_WINDOW * 60_000) / WINDOW_MS

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_zulip_resume_src')
  state = await createTestDatabase('cf_zulip_resume_state')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

async function kill(run: CliRun): Promise<{ stdout: string; stderr: string; signal: NodeJS.Signals | null; code: number | null }> {
  run.child.kill('SIGKILL')
  return run.done
}

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

it('SIGKILL while reading messages and twice while loading, then a rerun: nothing missing, nothing duplicated', async () => {
  const seed = largeZulipSeed({ messages: 3000 })
  await loadZulipFixture(source.url, seed)
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: PER_WINDOW, windowMs: WINDOW_MS })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: { connector: 'zulip', url: source.url, realm: 'acme', pageSize: 10 },
    policies: POLICIES,
    requestsPerMinute: RPM,
    itemsPerRequest: 15,
    load: { quotaWindowMs: WINDOW_MS, leaseSeconds: 15 },
  })
  const started = Date.now()
  const log: string[] = []

  // 1. While planning: after users, groups and members, somewhere in the messages.
  const first = runCli(['run', '--config', cfg])
  await first.waitFor('planned members', 60_000)
  await sleep(between(0, 400))
  const k1 = await kill(first)
  const planningKilled = !/policy outcomes:/.test(k1.stdout)
  log.push(
    `kill 1: ${k1.signal}, during planning: ${planningKilled}, platform: ${JSON.stringify(countsOf(await sandboxContents(tsb.sandbox, app.id)))}`,
  )
  expect(k1.signal, log.join('\n')).toBe('SIGKILL')
  expect(planningKilled, log.join('\n')).toBe(true)

  // 2, 3. While loading; the third once messages flow.
  for (let i = 2; i <= 3; i++) {
    const run = runCli(['run', '--config', cfg])
    await run.waitFor('loader started', 60_000)
    if (i === 3) {
      const until = Date.now() + 60_000
      while (countsOf(await sandboxContents(tsb.sandbox, app.id)).messages === 0 && Date.now() < until) {
        await sleep(50)
      }
      await sleep(between(0, 1500))
    } else {
      await sleep(between(400, 2000))
    }
    const k = await kill(run)
    log.push(`kill ${i}: ${k.signal}, platform: ${JSON.stringify(countsOf(await sandboxContents(tsb.sandbox, app.id)))}`)
    expect(k.signal, `${log.join('\n')}\n${k.stderr.slice(-1500)}`).toBe('SIGKILL')
  }
  const expected = expectMigration(expectedZulip(seed), POLICIES, started)
  const partial = countsOf(await sandboxContents(tsb.sandbox, app.id))
  expect(partial.messages, log.join('\n')).toBeGreaterThan(0)
  expect(partial.messages, log.join('\n')).toBeLessThan(expected.items.messages.size)

  // 4. To the end.
  const last = await runCli(['run', '--config', cfg]).done
  expect(last.code, `${log.join('\n')}\n${last.stderr.slice(-3000)}`).toBe(3)
  expect(last.stdout).toMatch(/read completed by an earlier run/)

  const actual = await sandboxContents(tsb.sandbox, app.id)
  expect(expected.items.messages.size).toBeGreaterThan(2500)
  expect(compareWithExpected(expected.items, actual), log.join('\n')).toEqual([])
  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as { entity: string; legacyId: string }[]
  expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual([...expected.rejects.keys()].sort())
}, 240_000)
