/**
 * `chatferry run` on a grown Nextcloud Talk fixture (a few thousand chat comments), killed with
 * SIGKILL while it reads and plans, and again while it loads, then run again to completion: the
 * sandbox holds exactly what the fixture and the policies predict, item by item, nothing missing
 * and nothing twice. The source is MariaDB with the prefix `nc_` (Postgres when no MariaDB server
 * is there); small source pages and a small quota make both phases last a few seconds.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../mappings/index.ts'
import { expectedNextcloud } from '../fixtures/nextcloud-talk/expected.ts'
import { largeNextcloudSeed } from '../fixtures/nextcloud-talk/generate.ts'
import { loadNextcloudFixture } from '../fixtures/nextcloud-talk/load.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { dropWithin } from '../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../helpers/mysql.ts'
import { compareWithExpected, countsOf, expectMigration, sandboxContents, writeRunConfig } from '../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, threads: { quoteParent: true }, systemMessages: { mode: 'as-user' } }
const WINDOW_MS = 2000
const PER_WINDOW = 60
const RPM = (PER_WINDOW * 60_000) / WINDOW_MS
const ENGINE = mysqlServerUrl() === undefined ? 'postgres' : 'mysql'

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = ENGINE === 'mysql' ? await createMysqlTestDatabase('cf_nc_resume') : await createTestDatabase('cf_nc_resume')
  state = await createTestDatabase('cf_nc_resume_state')
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min))

it(`SIGKILL while reading and while loading, then a rerun: nothing missing, nothing duplicated (source: ${ENGINE})`, async () => {
  const seed = largeNextcloudSeed({ comments: 3000 })
  await loadNextcloudFixture(ENGINE, source.url, { prefix: 'nc_', seed })
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: PER_WINDOW, windowMs: WINDOW_MS })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: { connector: 'nextcloud-talk', url: source.url, tablePrefix: 'nc_', pageSize: 10 },
    policies: POLICIES,
    requestsPerMinute: RPM,
    itemsPerRequest: 15,
    load: { quotaWindowMs: WINDOW_MS, leaseSeconds: 15 },
  })
  const started = Date.now()
  const log: string[] = []

  // 1. Killed while the messages are read and planned.
  const first = runCli(['run', '--config', cfg])
  await first.waitFor('planned members', 60_000)
  await sleep(between(0, 300))
  first.child.kill('SIGKILL')
  const k1 = await first.done
  log.push(`kill 1: ${k1.signal}, during planning: ${!/policy outcomes:/.test(k1.stdout)}`)
  expect(k1.signal, log.join('\n')).toBe('SIGKILL')
  expect(/policy outcomes:/.test(k1.stdout), log.join('\n')).toBe(false)

  // 2. Killed while loading, once messages have started to arrive.
  const second = runCli(['run', '--config', cfg])
  await second.waitFor('loader started', 60_000)
  const until = Date.now() + 60_000
  while (countsOf(await sandboxContents(tsb.sandbox, app.id)).messages === 0 && Date.now() < until) {
    await sleep(50)
  }
  await sleep(between(0, 1000))
  second.child.kill('SIGKILL')
  const k2 = await second.done
  const partial = countsOf(await sandboxContents(tsb.sandbox, app.id))
  log.push(`kill 2: ${k2.signal}, platform: ${JSON.stringify(partial)}`)
  expect(k2.signal, log.join('\n')).toBe('SIGKILL')

  const expected = expectMigration(expectedNextcloud(seed), POLICIES, started)
  expect(partial.messages, log.join('\n')).toBeGreaterThan(0)
  expect(partial.messages, log.join('\n')).toBeLessThan(expected.items.messages.size)

  // 3. The same command again, to the end.
  const last = await runCli(['run', '--config', cfg]).done
  expect(last.code, `${log.join('\n')}\n${last.stderr.slice(-3000)}`).toBe(3)
  expect(expected.items.messages.size).toBeGreaterThan(2500)
  expect(compareWithExpected(expected.items, await sandboxContents(tsb.sandbox, app.id)), log.join('\n')).toEqual([])
  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as { entity: string; legacyId: string }[]
  expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual([...expected.rejects.keys()].sort())
}, 240_000)
