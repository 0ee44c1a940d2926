/**
 * The ledger commands as processes: `load` exit codes (0 / 3 / 2), `status --json`, `rejects`,
 * `retry-rejected`, the embedded store's single-process lock, and two `load`s of one job at once.
 * Only the lock and the worker's refusal need the embedded store; the rest runs on Postgres (each
 * process opening an embedded store costs CPU; those commands on the embedded store are exercised by
 * ledger-watch, run-generic-sql and others).
 */
import { writeFileSync } from 'node:fs'

import { afterAll, beforeAll, expect, it } from 'vitest'

import { type Sandbox, startSandbox } from '../../../src/sandbox/index.ts'
import { openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { dropWithin, sandboxKeys } from '../../helpers/loader-harness.ts'
import { testSecret } from '../../helpers/secrets.ts'

let sb: Sandbox
let tdb: TestDatabase
let rejectsDb: TestDatabase
let sbDb: TestDatabase

beforeAll(async () => {
  tdb = await createTestDatabase('cf_cli')
  rejectsDb = await createTestDatabase('cf_cli_rejects')
  // The sandbox on Postgres: its store is not the subject, and an in-process PGlite serving every request costs CPU.
  sbDb = await createTestDatabase('cf_cli_sbx')
  sb = await startSandbox({ state: { url: sbDb.url, poolSize: 5 } })
})

afterAll(async () => {
  await sb?.close()
  await dropWithin(tdb)
  await dropWithin(rejectsDb)
  await dropWithin(sbDb)
})

it('load exits 3 with a rejected item, rejects lists it, retry-rejected + load after a fix exits 0', async () => {
  const app = await sb.createApp({ id: 'cli-rejects', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 600 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: rejectsDb.url, requestsPerMinute: 600 })
  let store = await openLedger({ url: rejectsDb.url })
  await store.ensureJob('cli-rejects', app.id)
  await store.planItems('cli-rejects', 'users', users(3))
  const msgs = messages(60, 3)
  ;(msgs[5]!.payload as Record<string, unknown>).receiver = 'ghost'
  await store.planItems('cli-rejects', 'messages', msgs)
  await store.close()

  const first = await runCli(['load', '--config', cfg]).done
  expect(first.code, first.stderr).toBe(3)

  const rejects = await runCli(['rejects', '--config', cfg, '--json']).done
  const list = JSON.parse(rejects.stdout) as { targetKey: string; code: string }[]
  expect(list.map((r) => r.targetKey)).toEqual(['m5'])
  const code = list[0]!.code

  const status = await runCli(['status', '--config', cfg, '--json']).done
  const report = JSON.parse(status.stdout) as { entities: { entity: string; done: number; rejected: number; remaining: number }[] }
  expect(report.entities.find((e) => e.entity === 'messages')).toMatchObject({ done: 59, rejected: 1, remaining: 0 })

  // The fix: the missing user now exists in the ledger, and the message is planned again.
  store = await openLedger({ url: rejectsDb.url })
  await store.planItems('cli-rejects', 'users', [{ legacyId: 'ghost', targetKey: 'ghost', payload: { uid: 'ghost', name: 'Ghost' } }])
  await store.close()
  const retry = await runCli(['retry-rejected', '--config', cfg, '--code', code]).done
  expect(retry.stdout).toMatch(/^1 rejected item/)
  const second = await runCli(['load', '--config', cfg]).done
  expect(second.code, second.stderr).toBe(0)
  expect((await sandboxKeys(sb, app.id, 'messages')).size).toBe(60)
  // Two loads (each also opens the update lane), with the 500-splitting of the message batch holding
  // the bad row.
}, 120_000)

it('embedded store: a second process is refused with a clear message while the first runs', async () => {
  const app = await sb.createApp({ id: 'cli-lock', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 30, windowMs: 60_000 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, requestsPerMinute: 30 })
  const dir = cfg.replace(/chatferry\.yaml$/, '.chatferry')
  const store = await openLedger({ dir })
  await store.ensureJob('cli-lock', app.id)
  await store.planItems('cli-lock', 'messages', messages(2000, 2))
  await store.close()
  const first = runCli(['load', '--config', cfg])
  await first.waitFor('loader started')
  const second = await runCli(['load', '--config', cfg]).done
  expect(second.code).toBe(1)
  expect(second.stderr).toMatch(/another chatferry process, pid \d+ \(chatferry load, since [^)]+\), is using the embedded store/)
  first.child.kill('SIGTERM')
  const res = await first.done
  expect(res.code).toBe(1)
}, 60_000)

it('a bad configuration exits 2; worker on the embedded store exits 2', async () => {
  const app = await sb.createApp({ id: 'cli-usage', apiKey: testSecret('apikey') })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl })
  const broken = cfg.replace(/chatferry\.yaml$/, 'broken.yaml')
  writeFileSync(broken, 'target:\n  appId: x\n')
  expect((await runCli(['load', '--config', broken]).done).code).toBe(2)
  expect((await runCli(['load', '--config', cfg], { CHATFERRY_LOAD_CONCURRENCY: '0' }).done).code).toBe(2)
  const w = await runCli(['worker', '--config', cfg]).done
  expect(w.code).toBe(2)
  expect(w.stderr).toMatch(/state\.url/)
})

it('two loads of one job on Postgres at once join as workers: both finish, nothing is sent twice', async () => {
  const app = await sb.createApp({ id: 'cli-two', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 1200, windowMs: 10_000 } })
  const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: tdb.url, requestsPerMinute: 7200 })
  const store = await openLedger({ url: tdb.url })
  await store.ensureJob('cli-two', app.id)
  await store.planItems('cli-two', 'users', users(10))
  await store.planItems('cli-two', 'messages', messages(2500, 10))
  await store.close()
  const env = { CHATFERRY_LOAD_QUOTA_WINDOW_MS: '10000' }
  const [a, b] = await Promise.all([runCli(['load', '--config', cfg], env).done, runCli(['load', '--config', cfg], env).done])
  expect(a.code, a.stderr).toBe(0)
  expect(b.code, b.stderr).toBe(0)
  await sb.whenIdle()
  const log = await sb.requests(app.id)
  const sent = log.filter((r) => r.status === 200).reduce((n, r) => n + (r.itemCount ?? 0), 0)
  expect(sent).toBe(2510)
  expect((await sandboxKeys(sb, app.id, 'messages')).size).toBe(2500)
}, 60_000)
