/**
 * Issue 28, item 6: every exit and message an operator meets says what to do next. Through the
 * CLI as a process (real Postgres, the sandbox, a SQLite in-house source): a missing ledger
 * database is exit 2 with the command that creates it; an unreachable platform before anything
 * was loaded is exit 2 at once, not waited out; an old Node is refused by name; `--json` under
 * `npm run` is clean with `-s` and warned about without it; a DNS failure is named as such, not
 * blamed on the key; the plan summary lists every reject reason or says how many more;
 * `runs`/`rejects` have headers; the top-level help has exit 4; a mistyped configuration key
 * gets "did you mean"; an unknown command is exit 2 also with --help; a worker ended by SIGINT
 * is `stopped`, not `interrupted`.
 */
import { spawnSync } from 'node:child_process'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { type AddressInfo, createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { describe, expect, it } from 'vitest'

import { openLedger } from '../../../src/state/store.ts'
import { G0, genericSeed, genericSourceConfig, loadGenericSqlFixture, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { ledgerRows, oneJsonObject, runsOf, useCliSuite } from '../../helpers/cli-suite.ts'
import { genericJob } from '../../helpers/generic-job.ts'
import { runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { recordOutput } from '../../helpers/secrets.ts'

const ROOT = resolve(import.meta.dirname, '../../..')
const BIN = join(ROOT, 'bin/chatferry.js')
const suite = useCliSuite()
/** A Node older than 22 on this machine (`{path, version}`), for the refusal test; `undefined` when there is none. */
const OLD_NODE = ['/usr/bin/node', '/usr/local/bin/node', '/bin/node']
  .map((path) => ({ path, version: spawnSync(path, ['--version'], { encoding: 'utf8' }).stdout?.trim() }))
  .find((n): n is { path: string; version: string } => n.version !== undefined && /^v(1\d|2[01])\./.test(n.version))

/** A SQLite copy of the in-house fixture; `extraLines` adds chat_lines rows. */
async function sqliteSource(extraLines: Record<string, unknown>[] = []): Promise<{ dir: string; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-msg-'))
  const url = `sqlite:${join(dir, 'legacy.db')}`
  const seed = genericSeed('sqlite')
  const base = seed.chat_lines[0]!
  seed.chat_lines.push(...extraLines.map((o) => ({ ...base, ...o }) as (typeof seed.chat_lines)[number]))
  await loadGenericSqlFixture('sqlite', url, seed)
  return { dir, url }
}

/** A loopback port that was free a moment ago and is closed now. */
async function closedPort(): Promise<number> {
  const server = createServer()
  await new Promise<void>((res) => server.listen(0, '127.0.0.1', res))
  const { port } = server.address() as AddressInfo
  await new Promise((res) => server.close(res))
  return port
}

describe('the ledger and the platform', () => {
  it('a ledger database that does not exist: exit 2 naming the command that creates it (no password)', async () => {
    const { url } = await sqliteSource()
    const app = await suite.tsb.app()
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: 'postgres://postgres:s3cr3t-pw@127.0.0.1:5432/cf_no_such_ledger',
      source: genericSourceConfig(url) as unknown as Record<string, unknown>,
    })
    for (const command of ['run', 'status']) {
      const r = await runCli([command, '--config', cfg]).done
      expect(r.code, `${command}: ${r.stderr}`).toBe(2)
      expect(r.stderr).toContain(
        'state.url: the ledger database "cf_no_such_ledger" does not exist on 127.0.0.1:5432: create it with `createdb -h 127.0.0.1 -p 5432 -U postgres cf_no_such_ledger`',
      )
      expect(r.stderr).not.toContain('s3cr3t-pw')
    }
  }, 60_000)

  it('a platform nobody answers for, before anything was loaded: exit 2 at once naming target.baseUrl, nothing read', async () => {
    const { url } = await sqliteSource()
    const state = await suite.freshDb('cf_msg_unreach')
    const app = await suite.tsb.app()
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      // Nothing listens there any more: connection refused.
      baseUrl: `http://127.0.0.1:${await closedPort()}/apps/${app.id}/v3`,
      stateUrl: state.url,
      source: genericSourceConfig(url) as unknown as Record<string, unknown>,
    })
    const started = Date.now()
    const r = await runCli(['run', '--config', cfg, '--json']).done
    expect(r.code, r.stderr).toBe(2)
    // At once: not the outage retries (minutes) a platform that answered before would get. 20 s
    // leaves a loaded machine the start of a process and the pre-flight's own few attempts.
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(r.stderr).toMatch(
      /did not answer the pre-flight: NETWORK_ERROR: connection refused .*nothing of job \S+ was ever loaded, so this is not waited out as an outage: check target\.baseUrl in \S+ and this machine's network and DNS/,
    )
    expect(oneJsonObject(r.stdout)).toMatchObject({ command: 'run', exitCode: 2 })
    expect(await ledgerRows(state.url)).toMatchObject({ items: 0, cursors: 0 })
  }, 60_000)

  it('plan --check-target on a host name that does not resolve: a DNS failure, not a refused key', async () => {
    const { url } = await sqliteSource()
    const state = await suite.freshDb('cf_msg_dns')
    const cfg = writeRunConfig({
      appId: 'dnsapp',
      apiKey: 'k'.repeat(40),
      baseUrl: 'https://chatferry-test.invalid/v3',
      stateUrl: state.url,
      source: genericSourceConfig(url) as unknown as Record<string, unknown>,
      policies: { retention: { oldMessages: 'send' } },
    })
    const out = mkdtempSync(join(tmpdir(), 'cf-msg-dns-'))
    const r = await runCli(['plan', '--config', cfg, '--check-target', '--out', out]).done
    expect(r.code, r.stderr).toBe(3)
    expect(r.stdout).toMatch(
      /the platform at https:\/\/chatferry-test\.invalid\/v3 could not be reached, so the apiKey was not checked: NETWORK_ERROR: DNS lookup failed: no such host name \(ENOTFOUND/,
    )
    expect(r.stdout).not.toMatch(/apiKey does not work/)
  }, 60_000)
})

describe('Node, npm and the help', () => {
  // Skipped (and shown so) on a machine with no Node older than 22 to run the check with.
  it.runIf(OLD_NODE !== undefined)('an older Node is refused with what to run instead (exit 2, no stack trace)', () => {
    const old = OLD_NODE!
    const r = spawnSync(old.path, [BIN, 'status'], { encoding: 'utf8' })
    recordOutput('cli-old-node', `${r.stdout}\n${r.stderr}`)
    expect(r.status, r.stderr).toBe(2)
    expect(r.stderr).toMatch(
      new RegExp(
        `^chatferry: this is Node ${old.version.slice(1).replace(/\./g, '\\.')} \\(${old.path}\\); chatferry needs Node 22\\.13 or newer .*npm run chatferry -- <command>`,
      ),
    )
    expect(r.stderr).not.toMatch(/\n\s+at /)
  })

  it('--json under npm run: clean with -s; without it, stderr says to use -s', () => {
    const npm = (args: string[]) => {
      const r = spawnSync('npm', ['--prefix', ROOT, 'run', ...args], { cwd: tmpdir(), encoding: 'utf8' })
      recordOutput('cli-npm-json', `${r.stdout}\n${r.stderr}`)
      return r
    }
    const args = ['chatferry', '--', 'run', '--json', '-c', join(tmpdir(), 'cf-no-such-config.yaml')]
    const silent = npm(['-s', ...args])
    expect(silent.status).toBe(2)
    expect(oneJsonObject(silent.stdout)).toMatchObject({ command: 'run', exitCode: 2 })
    expect(silent.stderr).not.toMatch(/banner/)
    const loud = npm(args)
    expect(loud.status).toBe(2)
    expect(loud.stdout).toMatch(/^\n?> chatferry@/)
    expect(loud.stderr).toContain(
      'npm run printed its banner on stdout before this JSON; for output a program reads, run `npm run -s chatferry -- …`',
    )
  }, 60_000)

  it('the top-level help lists exit 4; an unknown command is exit 2 also with --help, with "did you mean"', async () => {
    const help = await runCli(['--help']).done
    expect(help.code).toBe(0)
    expect(help.stdout).toMatch(/\n {2}4 {2}run --delta --final finished, but the source changed after its read began/)
    for (const args of [
      ['nosuch', '--help'],
      ['fleet', 'nosuch', '-h'],
      ['statsu', '--help'],
    ]) {
      const r = await runCli(args).done
      expect(r.code, args.join(' ')).toBe(2)
      expect(r.stdout, args.join(' ')).toBe('')
      expect(r.stderr).toContain(`error: unknown command '${args[args.length - 2]}'`)
    }
    expect((await runCli(['statsu', '--help']).done).stderr).toContain('(Did you mean status?)')
    // A known command's help still works.
    expect((await runCli(['fleet', 'run', '--help']).done).code).toBe(0)
  }, 60_000)

  it('a mistyped configuration key: "did you mean" with the key it is closest to', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cf-msg-keys-'))
    const file = join(dir, 'chatferry.yaml')
    writeFileSync(
      file,
      [
        'target: { appId: app1, region: us, apiKey: x, baseUrl: "http://127.0.0.1:1/apps/app1/v3", qouta: { requestsPerMinute: 5 } }',
        'state: { dir: ./x }',
        'polices: {}',
        'source: { connector: generic-sql, ulr: "sqlite:/tmp/x.db", entities: { mesages: { query: "select 1 as id" } } }',
        'changes: { conflcits: report, zzz: 1 }',
      ].join('\n'),
    )
    const r = await runCli(['config', 'check', '-c', file]).done
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('target: unknown key: qouta (did you mean quota?)')
    expect(r.stderr).toContain('(file): unknown key: polices (did you mean policies?)')
    expect(r.stderr).toContain('source: unknown key: ulr (did you mean url?)')
    expect(r.stderr).toContain('source.entities: unknown key: mesages (did you mean messages?)')
    expect(r.stderr).toMatch(/changes: unknown keys: conflcits \(did you mean conflicts\?\), zzz\n/)
  })
})

describe('worker', () => {
  it('a worker ended by SIGINT is recorded as stopped, the way it is meant to end, not interrupted', async () => {
    const state = await suite.freshDb('cf_msg_worker')
    const app = await suite.tsb.app({ requestsPerMinute: 6000 })
    const cfg = writeConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, requestsPerMinute: 6000 })
    const store = await openLedger({ url: state.url })
    await store.ensureJob(app.id, app.id)
    await store.planItems(app.id, 'users', users(3))
    await store.close()
    const worker = runCli(['worker', '--config', cfg])
    await worker.waitFor('loader started', 30_000)
    worker.child.kill('SIGINT')
    const done = await worker.done
    expect(done.code, done.stderr.slice(-2000)).toBe(0)
    expect((await runsOf(state.url, app.id)).filter((r) => r.mode === 'worker').map((r) => r.status)).toEqual(['stopped'])
    expect((await runCli(['runs', '--config', cfg]).done).stdout).toMatch(/^#\d+\tworker\tstopped\t/m)
  }, 60_000)
})

describe('plan, runs and rejects', () => {
  it('the plan summary names every reject reason or how many more; runs and rejects print a header', async () => {
    // Six ways a chat line can be bad, on top of the fixture's own.
    const bad = (lid: number, o: Record<string, unknown>) => ({ lid, posted: sqlTime(G0 + lid * 60_000), ...o })
    const { url } = await sqliteSource([
      bad(101, { ats: '["2",' }),
      bad(102, { files: '[{"url":' }),
      bad(103, { room: null, to_pid: null }),
      bad(104, { author: null }),
      bad(105, { room: 'r-nowhere' }),
      bad(106, { reacts: '{"x":' }),
    ])
    const { cfg } = await genericJob(suite, 'cf_msg_plan', { url })
    const out = mkdtempSync(join(tmpdir(), 'cf-msg-plan-'))
    const plan = await runCli(['plan', '--config', cfg, '--out', out]).done
    expect(plan.code, plan.stderr).toBe(0)
    const line = plan.stdout.split('\n').find((l) => l.startsWith('rejected messages: '))
    expect(line, plan.stdout).toBeDefined()
    const shown = (line!.match(/ × /g) ?? []).length
    expect(shown).toBe(3)
    expect(line).toMatch(/; \+\d+ more reasons \(\d+; all in plan-report\.json\)$/)

    const run = await runCli(['run', '--config', cfg]).done
    expect(run.code, run.stderr).toBe(3)
    const runs = await runCli(['runs', '--config', cfg]).done
    expect(runs.stdout.split('\n')[0]).toBe('run\tmode\toutcome\tstarted → ended\tduration\tcounts')
    const rejects = await runCli(['rejects', '--config', cfg]).done
    expect(rejects.stdout.split('\n')[0]).toBe('entity or update\tlegacy id\ttarget key\tcode\treason')
    expect(rejects.stdout).toMatch(/^messages\t103\t/m)
  }, 120_000)
})
