/**
 * Issue 14, honest exits for unattended runs, through the CLI as a process on a real Postgres
 * ledger and a real sandbox: an unknown job is exit 2 for every command that takes `--job`; `load`
 * with nothing planned is exit 2; a wrong API key stops `run` before the source is read (exit 2);
 * a missing source table is exit 2 (SOURCE_INVALID); `--json` prints exactly one object for `run`,
 * `load` and `retry-rejected`; a relative `--config` is the caller's; a killed `npm run` leaves no
 * loader behind and its run row says interrupted; a second signal quits at once and still records
 * it. (Shell completion: cli-completion.test.ts.) The cases that read a Postgres source only read
 * it: they share one, loaded once.
 */
import { spawn, spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'

import pg from 'pg'
import { beforeAll, describe, expect, inject, it } from 'vitest'

import { openLedger } from '../../../src/state/store.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { ledgerRows, oneJsonObject, runsOf, useCliSuite } from '../../helpers/cli-suite.ts'
import type { TestDatabase } from '../../helpers/db.ts'
import { CLI, messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { createMysqlTestDatabase } from '../../helpers/mysql.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { mgmtRaw } from '../../helpers/sandbox.ts'
import { recordOutput, testSecret } from '../../helpers/secrets.ts'

const ROOT = resolve(import.meta.dirname, '../../..')
const POLICIES = { retention: { oldMessages: 'send' as const } }

const suite = useCliSuite()
const { freshDb } = suite

/** The generic-sql fixture on Postgres, loaded on first use; the cases only read it. */
let pgSource: Promise<TestDatabase> | undefined
const sharedSource = () =>
  (pgSource ??= freshDb('cf_exit_src').then(async (db) => {
    await loadGenericSqlFixture('postgres', db.url)
    return db
  }))

describe('an unknown job is exit 2 for every command that takes --job', () => {
  let state: TestDatabase
  let cfg: string
  let appId: string

  beforeAll(async () => {
    state = await freshDb('cf_exit_jobs')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    appId = app.id
    cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, requestsPerMinute: 6000 })
  })

  it('with no jobs in the ledger: status and load say so, and what to run', async () => {
    const status = await runCli(['status', '--config', cfg, '--job', 'nope']).done
    expect(status.code, status.stderr).toBe(2)
    expect(status.stderr).toMatch(/job nope not found: no jobs yet in postgres:\/\/.*: run `npm run chatferry -- run -c .*chatferry\.yaml` first/)
    expect(status.stdout).toBe('')
    // The config's own job, never planned: load has nothing to do, and says how to plan it.
    const load = await runCli(['load', '--config', cfg]).done
    expect(load.code, load.stderr).toBe(2)
    expect(load.stderr).toMatch(
      new RegExp(`nothing planned for job ${appId} in .*: the job has no items to load; run \`npm run chatferry -- run -c \\S+\` first`),
    )
  }, 60_000)

  it('status, rejects, runs, retry-rejected, verify, load, worker and purge with a typo in --job: exit 2 naming the known jobs', async () => {
    const store = await openLedger({ url: state.url })
    await store.ensureJob('alpha', appId)
    await store.planItems('alpha', 'users', users(2))
    await store.ensureJob('beta', appId)
    await store.close()
    for (const command of ['status', 'rejects', 'runs', 'retry-rejected', 'verify', 'load', 'worker', 'purge']) {
      const r = await runCli([
        command,
        '--config',
        cfg,
        '--job',
        'alpah',
        ...(command === 'verify' ? ['--out', mkdtempSync(join(tmpdir(), 'cf-v-'))] : []),
        ...(command === 'purge' ? ['--yes'] : []),
      ]).done
      expect(r.code, `${command}: ${r.stderr}`).toBe(2)
      expect(r.stderr, command).toMatch(/job alpah not found in postgres:\/\/\S+; known jobs: alpha, beta/)
    }
    // Nothing was written for the typo.
    expect((await runsOf(state.url, 'alpah')).length).toBe(0)
    // The job exists but has no items: load says nothing is planned (exit 2).
    const empty = await runCli(['load', '--config', cfg, '--job', 'beta']).done
    expect(empty.code, empty.stderr).toBe(2)
    expect(empty.stderr).toMatch(/nothing planned for job beta/)
    // A known job works: status exits 0.
    const ok = await runCli(['status', '--config', cfg, '--job', 'alpha', '--json']).done
    expect(ok.code, ok.stderr).toBe(0)
    expect(JSON.parse(ok.stdout)).toMatchObject({ jobId: 'alpha' })
  }, 120_000)

  it('load --json: every item done → exit 0 and one object; loading again says all is done (exit 0); retry-rejected --json', async () => {
    const store = await openLedger({ url: state.url })
    await store.ensureJob('gamma', appId)
    await store.planItems('gamma', 'users', users(3))
    const msgs = messages(20, 3)
    ;(msgs[4]!.payload as Record<string, unknown>).receiver = 'ghost'
    await store.planItems('gamma', 'messages', msgs)
    await store.close()

    const first = await runCli(['load', '--config', cfg, '--job', 'gamma', '--json']).done
    expect(first.code, first.stderr).toBe(3)
    const s1 = oneJsonObject(first.stdout)
    expect(s1).toMatchObject({ command: 'load', status: 'rejected', exitCode: 3, jobId: 'gamma' })
    expect(s1.runId).toEqual(expect.any(Number))
    expect(s1.durationMs).toEqual(expect.any(Number))
    expect((s1.entities as Record<string, unknown>).messages).toMatchObject({ total: 20, done: 19, rejected: 1, remaining: 0 })
    expect((s1.entities as Record<string, unknown>).users).toMatchObject({ total: 3, done: 3, created: 3 })
    const runs = await runsOf(state.url, 'gamma')
    expect(runs.find((r) => r.id === s1.runId)).toMatchObject({ mode: 'load', status: 'rejected' })

    const retry = await runCli(['retry-rejected', '--config', cfg, '--job', 'gamma', '--json']).done
    expect(retry.code, retry.stderr).toBe(0)
    const s2 = oneJsonObject(retry.stdout)
    expect(s2).toMatchObject({ command: 'retry-rejected', status: 'succeeded', exitCode: 0, jobId: 'gamma', replanned: 1 })
    expect((s2.entities as Record<string, unknown>).messages).toMatchObject({ rejected: 0, remaining: 1 })

    // The fix: the receiver exists now.
    const fix = await openLedger({ url: state.url })
    await fix.planItems('gamma', 'users', [{ legacyId: 'ghost', targetKey: 'ghost', payload: { uid: 'ghost', name: 'Ghost' } }])
    await fix.close()
    const second = await runCli(['load', '--config', cfg, '--job', 'gamma']).done
    expect(second.code, second.stderr).toBe(0)
    expect(second.stdout).toMatch(/^load succeeded in .* \(exit 0, job gamma, run \d+\): all 24 items of job gamma are done or skipped/m)
    expect(second.stdout).toMatch(/^ {2}messages\s+20 done/m)
    // Nothing left: still exit 0, with the summary saying so.
    const third = await runCli(['load', '--config', cfg, '--job', 'gamma', '--json']).done
    expect(third.code, third.stderr).toBe(0)
    expect(oneJsonObject(third.stdout)).toMatchObject({ status: 'succeeded', exitCode: 0, jobId: 'gamma' })
  }, 120_000)
})

describe('load', () => {
  it('credentials refused mid-load (the app deleted, ERR_APP_ARCHIVED 403): exit 2 naming what to fix, not "rerun resumes"', async () => {
    const state = await freshDb('cf_exit_revoked')
    const app = await suite.tsb.app({ requestsPerMinute: 60 })
    const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, requestsPerMinute: 60 })
    const store = await openLedger({ url: state.url })
    await store.ensureJob('revoked', app.id)
    await store.planItems('revoked', 'users', users(400))
    await store.close()
    const load = runCli(['load', '--config', cfg, '--job', 'revoked', '--json'])
    // At 60 requests a minute the 8 batches take about 8 s: delete the app after the first one landed.
    const t0 = Date.now()
    while ((await suite.tsb.sandbox.requests(app.id)).length === 0 && Date.now() - t0 < 30_000) {
      await new Promise((r) => setTimeout(r, 100))
    }
    const del = await mgmtRaw(suite.tsb.sandbox, `/apps/${app.id}`, { method: 'DELETE' })
    expect(del.status).toBeLessThan(300)
    const r = await load.done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/ERR_APP_ARCHIVED.*fix target\.apiKey \(or the app\)/)
    expect(r.stderr).not.toMatch(/run the same command again to resume\)/)
    expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'load', exitCode: 2, jobId: 'revoked' })
  }, 120_000)
})

describe('run', () => {
  it('a wrong API key: exit 2 before the source is read — no ledger rows, no import request', async () => {
    const state = await freshDb('cf_exit_key')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    // The source is unreachable: had run read it before checking the key, it would exit 1 naming it.
    const source = { ...genericSourceConfig('postgres://reader@127.0.0.1:9/legacy'), connectTimeoutMs: 2000 }
    const wrongKey = testSecret('wrong-key')
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: wrongKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: source as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--config', cfg, '--json']).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      new RegExp(
        `the platform refused the API key for app ${app.id}: AUTH_ERR_APIKEY_NOT_FOUND \\(HTTP 401\\).*; fix target\\.apiKey in ${cfg.replace(/[.]/g, '\\.')}`,
      ),
    )
    expect(r.stderr).not.toMatch(/127\.0\.0\.1:9|SOURCE_UNAVAILABLE/)
    expect(r.stderr + r.stdout).not.toContain(wrongKey)
    expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'run', status: 'usage-error', exitCode: 2, runId: null })
    expect(await ledgerRows(state.url)).toMatchObject({ runs: 0, items: 0, cursors: 0 })
    await suite.tsb.sandbox.whenIdle()
    expect(await suite.tsb.sandbox.requests(app.id)).toHaveLength(0)

    // An app the platform does not know: exit 2 too, naming the app.
    const cfg2 = writeRunConfig({
      appId: 'no-such-app',
      apiKey: app.apiKey,
      baseUrl: app.baseUrl.replace(app.id, 'no-such-app'),
      stateUrl: state.url,
      source: source as unknown as Record<string, unknown>,
    })
    const r2 = await runCli(['run', '--config', cfg2]).done
    expect(r2.code, r2.stderr).toBe(2)
    expect(r2.stderr).toMatch(/the platform does not know app no-such-app .*AUTH_ERR_INVALID_APPID.*; fix target\.appId/)
  }, 60_000)

  it('a base URL in another region than target.region: exit 2 before the source is read or the platform asked', async () => {
    const state = await freshDb('cf_exit_region')
    const source = { ...genericSourceConfig('postgres://reader@127.0.0.1:9/legacy'), connectTimeoutMs: 2000 }
    const cfg = writeRunConfig({
      appId: 'acme',
      apiKey: testSecret('region-key'),
      // The platform's own host name says eu; the configuration says us.
      baseUrl: 'https://acme.api-eu.cometchat.io/v3',
      stateUrl: state.url,
      source: source as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--config', cfg, '--json']).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      /target\.baseUrl https:\/\/acme\.api-eu\.cometchat\.io\/v3 is in region eu, the configuration says us.*fix target\.region/s,
    )
    expect(r.stderr).not.toMatch(/127\.0\.0\.1:9|SOURCE_UNAVAILABLE/)
    expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'run', status: 'usage-error', exitCode: 2 })
    expect(await ledgerRows(state.url)).toMatchObject({ runs: 0, items: 0 })
  }, 60_000)

  it('a missing source table: exit 2 SOURCE_INVALID naming the table, nothing loaded', async () => {
    const source = await sharedSource()
    const state = await freshDb('cf_exit_tbl_state')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    const good = genericSourceConfig(source.url)
    const broken = {
      ...good,
      entities: { ...good.entities, users: { ...good.entities!.users!, query: good.entities!.users!.query.replace(/FROM people/, 'FROM peeople') } },
    }
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: broken as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--config', cfg]).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/relation "peeople" does not exist \[SOURCE_INVALID\]/)
    expect(r.stderr).toMatch(/fix source/)
    expect(await ledgerRows(state.url)).toMatchObject({ items: 0 })
    expect(await runsOf(state.url, app.id)).toMatchObject([{ mode: 'run', status: 'failed' }])
    await suite.tsb.sandbox.whenIdle()
    expect(await suite.tsb.sandbox.requests(app.id)).toHaveLength(0)
  }, 60_000)

  it('a delta before the full read ever completed: exit 2 naming the command to run, nothing read or sent', async () => {
    const source = await sharedSource()
    const state = await freshDb('cf_exit_delta_state')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--delta', '--config', cfg, '--json']).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      /a delta run needs a completed full read of users first: run `chatferry run` until it exits 0 or 3.*\[DELTA_BEFORE_FULL_READ\]/,
    )
    expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'run', exitCode: 2 })
    expect(await ledgerRows(state.url)).toMatchObject({ items: 0 })
    await suite.tsb.sandbox.whenIdle()
    expect(await suite.tsb.sandbox.requests(app.id)).toHaveLength(0)
  }, 60_000)

  for (const engine of ['mysql', 'sqlite'] as const) {
    it.skipIf(engine === 'mysql' && inject('mysqlUrl') === undefined)(
      `a missing table on ${engine === 'mysql' ? 'MariaDB' : 'SQLite'}: exit 2 SOURCE_INVALID too`,
      async () => {
        let url: string
        if (engine === 'mysql') {
          const db = await createMysqlTestDatabase('cf_exit_tbl')
          suite.dropAfter(db)
          url = db.url
        } else {
          url = `sqlite:${join(mkdtempSync(join(tmpdir(), 'cf-exit-sqlite-')), 'legacy.db')}`
        }
        await loadGenericSqlFixture(engine, url)
        const state = await freshDb('cf_exit_tbl_state')
        const app = await suite.tsb.app({ requestsPerMinute: 6000 })
        const good = genericSourceConfig(url)
        const broken = {
          ...good,
          entities: {
            ...good.entities,
            users: { ...good.entities!.users!, query: good.entities!.users!.query.replace(/FROM people/, 'FROM peeople') },
          },
        }
        const cfg = writeRunConfig({
          appId: app.id,
          apiKey: app.apiKey,
          baseUrl: app.baseUrl,
          stateUrl: state.url,
          source: broken as unknown as Record<string, unknown>,
        })
        const r = await runCli(['run', '--config', cfg]).done
        expect(r.code, r.stderr).toBe(2)
        expect(r.stderr).toMatch(
          engine === 'mysql' ? /Table '[^']*peeople' doesn't exist \[SOURCE_INVALID\]/ : /no such table: peeople \[SOURCE_INVALID\]/,
        )
        expect(await ledgerRows(state.url)).toMatchObject({ items: 0 })
      },
      60_000,
    )
  }

  it('an unknown source database: exit 2 SOURCE_INVALID; an unreachable one stays exit 1 (rerun)', async () => {
    const state = await freshDb('cf_exit_nodb_state')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    const url = new URL(state.url)
    url.pathname = '/cf_exit_no_such_database'
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: genericSourceConfig(url.toString()) as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--config', cfg]).done
    expect(r.code, r.stderr).toBe(2)
    expect(r.stderr).toMatch(/database "cf_exit_no_such_database" does not exist \[SOURCE_INVALID\]/)
    url.port = '9'
    const cfg2 = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: { ...genericSourceConfig(url.toString()), connectTimeoutMs: 2000 } as unknown as Record<string, unknown>,
    })
    const r2 = await runCli(['run', '--config', cfg2]).done
    expect(r2.code, r2.stderr).toBe(1)
    expect(r2.stderr).toMatch(/\[SOURCE_UNAVAILABLE\]/)
  }, 60_000)

  it('--json: exactly one summary object on stdout, the plan summary on stderr; without it, a human summary at the end', async () => {
    const source = await sharedSource()
    const state = await freshDb('cf_exit_json_state')
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000 })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      policies: POLICIES,
      source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    })
    const r = await runCli(['run', '--config', cfg, '--json']).done
    expect([0, 3], r.stderr.slice(-2000)).toContain(r.code)
    const s = oneJsonObject(r.stdout)
    expect(s).toMatchObject({ command: 'run', exitCode: r.code, status: r.code === 0 ? 'succeeded' : 'rejected', jobId: app.id })
    const runs = await runsOf(state.url, app.id)
    expect(runs.find((x) => x.id === s.runId)).toMatchObject({ mode: 'run' })
    expect(Object.keys(s.entities as object).sort()).toEqual(['groups', 'members', 'messages', 'users'])
    expect((s.entities as Record<string, { total: number; remaining: number }>).messages?.remaining).toBe(0)
    expect(r.stderr).toMatch(/^users\s+\d+ rows/m)

    const again = await runCli(['run', '--config', cfg]).done
    expect(again.code).toBe(r.code)
    expect(again.stdout).toMatch(/^users\s+read completed by an earlier run/m)
    expect(again.stdout).toMatch(/^run (succeeded|rejected) in .* \(exit [03], job \S+, run \d+\)/m)
  }, 120_000)
})

describe('run --json stopped by SIGTERM while planning', () => {
  it('exit 1 and still one JSON object on stdout, status interrupted; the run row says so', async () => {
    const source = await sharedSource()
    const state = await freshDb('cf_exit_sig_state')
    const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000 })
    const good = genericSourceConfig(source.url, 1)
    // A slow messages read (0.3 s a row), so the signal arrives while planning.
    const slow = {
      ...good,
      entities: {
        ...good.entities,
        messages: { query: good.entities!.messages!.query.replace(/\s+FROM chat_lines\s*$/, ', pg_sleep(0.3) AS nap FROM chat_lines') },
      },
    }
    expect(slow.entities.messages.query).toContain('pg_sleep')
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      policies: POLICIES,
      source: slow as unknown as Record<string, unknown>,
    })
    const run = runCli(['run', '--config', cfg, '--json'])
    await run.waitFor('planned members', 60_000)
    run.child.kill('SIGTERM')
    const r = await run.done
    expect(r.code, r.stderr.slice(-2000)).toBe(1)
    const s = oneJsonObject(r.stdout)
    expect(s).toMatchObject({ command: 'run', status: 'interrupted', exitCode: 1, jobId: app.id })
    expect((await runsOf(state.url, app.id)).find((x) => x.id === s.runId)).toMatchObject({ mode: 'run', status: 'interrupted' })
  }, 90_000)
})

describe('--config is relative to the caller', () => {
  it('npm run chatferry from another directory finds ./chatferry.yaml there (INIT_CWD); a missing file names the path tried', async () => {
    const app = await suite.tsb.app()
    const callerDir = mkdtempSync(join(tmpdir(), 'cf-caller-'))
    mkdirSync(join(callerDir, 'conf'))
    writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl })
    const file = join(callerDir, 'conf', 'chatferry.yaml')
    writeFileSync(
      file,
      `target:\n  appId: ${app.id}\n  region: us\n  apiKey: \${CF_TEST_KEY}\n  baseUrl: ${app.baseUrl}\nstate:\n  dir: .chatferry\n`,
    )
    const env = { ...process.env, CF_TEST_KEY: app.apiKey }
    const npm = (args: string[]) => {
      const r = spawnSync('npm', ['--prefix', ROOT, 'run', '--silent', 'chatferry', '--', ...args], { cwd: callerDir, env, encoding: 'utf8' })
      recordOutput('cli-npm', `${r.stdout}\n${r.stderr}`)
      return r
    }
    const ok = npm(['config', 'check', '--config', 'conf/chatferry.yaml'])
    expect(ok.status, ok.stderr).toBe(0)
    expect(ok.stdout).toContain(`${file}: valid`)
    const missing = npm(['config', 'check', '-c', 'conf/nope.yaml'])
    expect(missing.status).toBe(2)
    expect(missing.stderr).toContain(`${join(callerDir, 'conf', 'nope.yaml')}: 1 problem in the configuration`)
    expect(missing.stderr).toMatch(
      /file not found \(pass --config FILE\); --config conf\/nope\.yaml is taken relative to \S+cf-caller-\S+, the directory the command was run in/,
    )
    // Without npm, relative to the process's own directory.
    const direct = spawnSync(process.execPath, [CLI, 'config', 'check', '-c', 'chatferry.yaml'], { cwd: dirname(file), env, encoding: 'utf8' })
    expect(direct.status, direct.stderr).toBe(0)
    expect(direct.stdout).toContain(`${file}: valid`)
  }, 60_000)
})

describe('no orphan', () => {
  const cases = [
    { kill: 'SIGKILL', closePipes: false },
    { kill: 'SIGTERM', closePipes: false },
    // The reader of its output is gone too: writing to the closed pipes must not crash the stop.
    { kill: 'SIGKILL', closePipes: true },
  ] as const
  for (const { kill, closePipes } of cases) {
    it(`${kill} to npm run chatferry -- load${closePipes ? ', its output pipes closed' : ''}: the node process stops within seconds and the run is interrupted`, async () => {
      const state = await freshDb('cf_exit_orphan')
      const app = await suite.tsb.app({ requestsPerMinute: 30 })
      const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, requestsPerMinute: 30 })
      const store = await openLedger({ url: state.url })
      await store.ensureJob(app.id, app.id)
      // 12 requests of 50 at 30 a minute: the load lasts about 24 s, the kill comes within seconds.
      await store.planItems(app.id, 'messages', messages(600, 2))
      await store.close()
      const npm = spawn('npm', ['--prefix', ROOT, 'run', 'chatferry', '--', 'load', '--config', cfg], {
        env: { ...process.env, CHATFERRY_LOG_LEVEL: 'info' },
        stdio: ['ignore', 'pipe', 'pipe'],
      })
      let out = ''
      npm.stdout.on('data', (d: Buffer) => (out += d.toString()))
      npm.stderr.on('data', (d: Buffer) => (out += d.toString()))
      const deadline = Date.now() + 30_000
      let loader: { id: number; owner: string | null } | undefined
      while (loader === undefined && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200))
        loader = (await runsOf(state.url, app.id)).find((r) => r.mode === 'load')
      }
      expect(loader, out).toBeDefined()
      const pid = Number(loader?.owner?.split('/')[1])
      expect(pid).toBeGreaterThan(0)
      expect(pid).not.toBe(npm.pid)
      npm.kill(kill)
      if (closePipes) {
        npm.stdout.destroy()
        npm.stderr.destroy()
      }
      const stoppedAt = Date.now()
      while (alive(pid) && Date.now() - stoppedAt < 15_000) {
        await new Promise((r) => setTimeout(r, 100))
      }
      recordOutput('cli-orphan', out)
      expect(alive(pid), `node ${pid} still alive ${Date.now() - stoppedAt} ms after ${kill} of npm\n${out.slice(-2000)}`).toBe(false)
      expect(Date.now() - stoppedAt).toBeLessThan(10_000)
      const run = (await runsOf(state.url, app.id)).find((r) => r.id === loader?.id)
      expect(run?.status, out.slice(-2000)).toBe('interrupted')
    }, 90_000)
  }
})

describe('a second signal', () => {
  it('quits at once (exit 1, within seconds, its request still on the wire) and still records the run row as interrupted', async () => {
    const state = await freshDb('cf_exit_twice')
    // Every import request takes 20 s: the first signal's "finish the batches in flight" would wait for it.
    const app = await suite.tsb.app({ requestsPerMinute: 6000, faults: { latencyMs: { min: 20_000, max: 20_000 } } })
    const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, timeoutMs: 60_000 })
    const store = await openLedger({ url: state.url })
    await store.ensureJob(app.id, app.id)
    await store.planItems(app.id, 'users', users(100))
    await store.close()
    const load = runCli(['load', '--config', cfg])
    await load.waitFor('loader started', 30_000)
    // A batch claimed and not settled: its request is on the wire (for 20 s).
    const c = new pg.Client({ connectionString: state.url })
    await c.connect()
    try {
      const claimed = async () =>
        (await c.query('select count(*)::int as n from chatferry.batches where lease_owner is not null and settled_at is null')).rows[0].n as number
      const deadline = Date.now() + 30_000
      while ((await claimed()) === 0 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
      }
      expect(await claimed()).toBeGreaterThan(0)
      await new Promise((r) => setTimeout(r, 1000))
      load.child.kill('SIGTERM')
      await load.waitFor('SIGTERM: stopping')
      const second = Date.now()
      load.child.kill('SIGTERM')
      const r = await load.done
      expect(r.code, r.stderr.slice(-2000)).toBe(1)
      expect(r.stderr).toMatch(/SIGTERM again: quitting at once/)
      // stderr is a pipe here: the log lines are JSON by default (pretty only on a terminal).
      const logLines = r.stderr.split('\n').filter((l) => l.trim() !== '' && !l.startsWith('chatferry:'))
      expect(logLines.length).toBeGreaterThan(2)
      for (const line of logLines) {
        expect(() => JSON.parse(line) as unknown, line).not.toThrow()
      }
      expect(Date.now() - second, 'not waiting for the 20 s request').toBeLessThan(10_000)
      const run = (await runsOf(state.url, app.id)).find((x) => x.mode === 'load')
      expect(run, r.stderr.slice(-2000)).toMatchObject({ status: 'interrupted', error: 'quit at once by a second signal' })
    } finally {
      await c.end()
    }
  }, 90_000)
})

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    // A zombie is dead for our purpose: /proc says so.
    const stat = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim()
    return stat !== '' && !stat.startsWith('Z')
  } catch {
    return false
  }
}

describe('usage errors with --json', () => {
  it('a bad flag value is exit 2 (not 1), and --json still prints its one object', async () => {
    for (const command of ['run', 'load']) {
      const r = await runCli([command, '--json', '--concurrency', 'x']).done
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(/option '--concurrency <n>' argument 'x' is invalid\. expected an integer, got x/)
      expect(oneJsonObject(r.stdout)).toMatchObject({ command, status: 'usage-error', exitCode: 2, jobId: null, runId: null })
    }
    const missing = await runCli(['retry-rejected', '--json', '-c', join(tmpdir(), 'cf-no-such-dir', 'chatferry.yaml')]).done
    expect(missing.code).toBe(2)
    expect(oneJsonObject(missing.stdout)).toMatchObject({ command: 'retry-rejected', status: 'usage-error', exitCode: 2 })
    expect(String(oneJsonObject(missing.stdout).error)).toContain('cf-no-such-dir/chatferry.yaml: 1 problem in the configuration')
  })
})
