/**
 * Issue 31, notifications: `run` tells the hooks of `notify:` when it ends, as processes against
 * the sandbox, with local HTTP receivers. A JSON hook gets `run.finished` with the counts
 * `status --json` shows and `rejects.threshold` with the run's new rejects; a Slack-format hook
 * gets `{"text": …}`; the final delta sends `delta.final.done` and no `rejects.threshold` (it
 * rejected nothing new); `verify` sends `verify.result`. A hook that always answers 500 is retried and given up; a hook that never
 * answers does not keep the run from exiting (it exits while that request is still open). No
 * body carries the API key or a hook's secret header. A bad hook URL fails `config check`.
 */
import { readFileSync, writeFileSync } from 'node:fs'
import { createServer, type IncomingMessage, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { dirname, join } from 'node:path'

import { afterAll, beforeAll, expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()
const HOOK_SECRET = 'hook-secret-header-0123456789'

interface Received {
  path: string
  headers: IncomingMessage['headers']
  body: Record<string, unknown>
  at: number
}

let server: Server
let base = ''
const received: Received[] = []
/** Requests to /hang (never answered) and when they came, and how many /fail got. */
const hanging: { req: IncomingMessage; at: number }[] = []
let failed = 0

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = ''
    req.on('data', (d: Buffer) => (text += d.toString()))
    req.on('end', () => {
      if (req.url === '/hang') {
        hanging.push({ req, at: Date.now() })
        return
      }
      if (req.url === '/fail') {
        failed++
        res.writeHead(500).end()
        return
      }
      received.push({ path: req.url ?? '', headers: req.headers, body: JSON.parse(text) as Record<string, unknown>, at: Date.now() })
      res.writeHead(204).end()
    })
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise<void>((r) => server.close(() => r()))
})

function withNotify(cfg: string, notify: unknown): void {
  const doc = parse(readFileSync(cfg, 'utf8')) as Record<string, unknown>
  writeFileSync(cfg, stringify({ ...doc, notify }))
}

it('run and the final delta notify each event; failing and hanging hooks neither fail nor hold the run; no secret sent', async () => {
  const source = await suite.freshDb('cf_notify_src')
  const state = await suite.freshDb('cf_notify_state')
  await loadGenericSqlFixture('postgres', source.url)
  const app = await suite.tsb.app({ retentionDays: 100_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
  })
  withNotify(cfg, {
    hooks: [
      { url: `${base}/json`, format: 'json', headers: { authorization: `Bearer ${HOOK_SECRET}` } },
      { url: `${base}/slack`, format: 'slack', events: ['run.finished', 'delta.final.done'] },
      { url: `${base}/fail`, format: 'json', events: ['run.finished'] },
      { url: `${base}/hang`, format: 'slack', events: ['run.finished'] },
    ],
    rejectThreshold: 2,
    // Long enough for the hanging hook to hold the exit for a minute, were it waited for.
    timeoutMs: 60_000,
    retries: 2,
    exitGraceMs: 3000,
  })

  const first = await runCli(['run', '--config', cfg]).done
  // Exit 3: finished, the fixture's bad rows rejected.
  expect(first.code, first.stderr.slice(-2000)).toBe(3)
  // It exited while the hanging hook's request was still open: never answered, not waited for past the grace.
  const exitedAt = Date.now()
  expect(hanging.length).toBe(1)
  // Never answered: the run gave it up after its grace (3 s), not after the attempt's 60 s timeout.
  expect(exitedAt - (hanging[0]?.at ?? 0)).toBeLessThan(60_000)
  expect(first.stderr).toMatch(/1 notification\(s\) still under way after 3000 ms: given up/)
  // The failing hook was tried again, then given up with a warning that does not name its URL.
  expect(failed).toBeGreaterThanOrEqual(2)
  expect(first.stderr).toMatch(/notify hook #3 \(127\.0\.0\.1:\d+\): not delivered \(answered 500\)/)

  const status = JSON.parse((await runCli(['status', '--config', cfg, '--json']).done).stdout) as {
    entities: { done: number; rejected: number; remaining: number; total: number }[]
    runs: { id: number; mode: string }[]
  }
  const sum = (k: 'done' | 'rejected' | 'remaining' | 'total') => status.entities.reduce((a, e) => a + e[k], 0)
  const json = received.filter((r) => r.path === '/json')
  const finished = json.find((r) => r.body.event === 'run.finished')?.body
  expect(finished).toMatchObject({
    source: 'chatferry',
    jobId: app.id,
    command: 'run',
    runId: status.runs.find((r) => r.mode === 'run')?.id,
    status: 'rejected',
    exitCode: 3,
    done: sum('done'),
    rejected: sum('rejected'),
    remaining: sum('remaining'),
    total: sum('total'),
  })
  const rejects = json.find((r) => r.body.event === 'rejects.threshold')?.body
  expect(rejects?.newRejects).toBe(sum('rejected'))
  expect(sum('rejected')).toBeGreaterThanOrEqual(2)
  expect(json.find((r) => r.body.event === 'rejects.threshold')?.headers.authorization).toBe(`Bearer ${HOOK_SECRET}`)
  const slack = received.filter((r) => r.path === '/slack')
  expect(slack.length).toBe(1)
  expect(Object.keys(slack[0]?.body ?? {})).toEqual(['text'])
  expect(String(slack[0]?.body.text)).toMatch(
    new RegExp(`^chatferry run\\.finished — job ${app.id}: run #\\d+ rejected: \\d+ of \\d+ done, \\d+ rejected, 0 remaining$`),
  )

  // verify tells its result (verify exits 0 when it passed, 3 when it found unexplained mismatches).
  const verified = await runCli(['verify', '--config', cfg, '--no-source', '--out', join(dirname(cfg), 'reports')]).done
  expect([0, 3], verified.stderr.slice(-2000)).toContain(verified.code)
  const verdict = received.find((r) => r.path === '/json' && r.body.event === 'verify.result')?.body
  expect(verdict).toMatchObject({ jobId: app.id, passed: verified.code === 0 })
  expect(typeof verdict?.mismatches).toBe('number')

  // The final delta: its own event, and nothing new rejected, so no rejects.threshold.
  const before = received.length
  const last = await runCli(['run', '--delta', '--final', '--config', cfg]).done
  // Exit 3 again: the job still has the rejected rows of the first run (none new).
  expect(last.code, last.stderr.slice(-2000)).toBe(3)
  const events = received.slice(before).map((r) => `${r.path} ${String(r.body.event ?? (r.body.text as string).split(' ')[1])}`)
  expect(events.sort()).toEqual(['/json delta.final.done', '/json run.finished', '/slack delta.final.done', '/slack run.finished'])

  for (const r of received) {
    expect(JSON.stringify(r.body)).not.toContain(app.apiKey)
    expect(JSON.stringify(r.body)).not.toContain(HOOK_SECRET)
  }
  expect(first.stderr + first.stdout + last.stderr + last.stdout).not.toContain(HOOK_SECRET)
}, 180_000)

it('a bad hook fails `config check` before any I/O, naming each field', async () => {
  const cfg = writeRunConfig({
    appId: 'notify-bad',
    apiKey: 'notify-bad-key-0123456789',
    baseUrl: 'http://127.0.0.1:9/x',
    source: genericSourceConfig('postgres://127.0.0.1:9/none') as unknown as Record<string, unknown>,
  })
  withNotify(cfg, { hooks: [{ url: 'ftp://chat.example/hook', format: 'teams', events: ['run.exploded'] }], timeoutMs: 0 })
  const r = await runCli(['config', 'check', '--config', cfg]).done
  expect(r.code).toBe(2)
  expect(r.stderr).toMatch(/notify\.hooks\.0\.url/)
  expect(r.stderr).toMatch(/notify\.hooks\.0\.format/)
  expect(r.stderr).toMatch(/notify\.hooks\.0\.events\.0/)
  expect(r.stderr).toMatch(/notify\.timeoutMs/)
}, 60_000)

it('`config check` shows a hook as <secret>: its URL and headers are keys', async () => {
  const cfg = writeRunConfig({
    appId: 'notify-shown',
    apiKey: 'notify-shown-key-0123456789',
    baseUrl: 'http://127.0.0.1:9/x',
    source: genericSourceConfig('postgres://127.0.0.1:9/none') as unknown as Record<string, unknown>,
  })
  withNotify(cfg, { hooks: [{ url: 'https://hooks.example/services/T000/B000/abcdefSECRETxyz', headers: { authorization: HOOK_SECRET } }] })
  const r = await runCli(['config', 'check', '--config', cfg]).done
  expect(r.code, r.stderr).toBe(0)
  expect(r.stdout).not.toContain('abcdefSECRETxyz')
  expect(r.stdout).not.toContain(HOOK_SECRET)
  expect(r.stdout).toMatch(/"url": "<secret>"/)
}, 60_000)
