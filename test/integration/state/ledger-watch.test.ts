/**
 * Watching a job while it runs on the embedded store, as processes: `status` answers through the
 * process holding the store (its status socket) with live numbers and without the API key or the
 * source password; the other read-only commands and the writes are refused naming the holder (they
 * need a Postgres ledger while a job runs); a SIGKILLed run shows as interrupted with its in-flight
 * items; `purge` refuses while live and without --yes, then removes the job.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { runCounts } from '../../../src/cli/commands/runs.ts'
import { createSampleLegacyDatabase, SAMPLE_QUERIES } from '../../../src/demo/sample-legacy.ts'
import type { Sandbox, SandboxApp } from '../../../src/sandbox/index.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { createTestDatabase } from '../../helpers/db.ts'
import { messages, runCli, users } from '../../helpers/ledger-fixtures.ts'
import { dropWithin, sandboxKeys } from '../../helpers/loader-harness.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'
import { testSecret } from '../../helpers/secrets.ts'

let tsb: TestSandbox
let sb: Sandbox

beforeAll(async () => {
  tsb = await startTestSandbox()
  sb = tsb.sandbox
})

afterAll(async () => {
  await tsb?.close()
})

/** A configuration whose API key and source password come from the environment, as in production. */
function watchConfig(app: SandboxApp, requestsPerMinute: number, itemsPerRequest = 50): { file: string; dir: string } {
  const base = mkdtempSync(join(tmpdir(), 'cf-watch-'))
  const file = join(base, 'chatferry.yaml')
  const dir = join(base, '.chatferry')
  writeFileSync(
    file,
    `target:\n  appId: ${app.id}\n  region: us\n  apiKey: \${CHATFERRY_API_KEY}\n  baseUrl: ${app.baseUrl}\n  timeoutMs: 10000\n` +
      `  quota:\n    requestsPerMinute: ${requestsPerMinute}\n    itemsPerRequest: ${itemsPerRequest}\n` +
      `state:\n  dir: ${dir}\n` +
      `source:\n  connector: mattermost\n  url: postgres://mmuser:\${CF_WATCH_SOURCE_PASSWORD}@127.0.0.1:5432/nowhere\n`,
  )
  return { file, dir }
}

const writerEnv = (app: SandboxApp) => ({ CHATFERRY_API_KEY: app.apiKey, CF_WATCH_SOURCE_PASSWORD: testSecret('srcpw') })
/** The read-only commands run without either secret. */
const readerEnv = { CHATFERRY_API_KEY: '', CF_WATCH_SOURCE_PASSWORD: '' }

interface StatusJson {
  entities: { entity: string; sent: number; done: number; rejected: number; remaining: number }[]
  runs: { id: number; mode: string; status: string; died?: string; heartbeatAt: string; stats: unknown }[]
  inFlightWhenDied: number
}

async function statusJson(file: string): Promise<StatusJson> {
  const res = await runCli(['status', '--config', file, '--json'], readerEnv).done
  expect(res.code, res.stderr).toBe(0)
  return JSON.parse(res.stdout) as StatusJson
}

async function statusTable(file: string): Promise<string> {
  const res = await runCli(['status', '--config', file], readerEnv).done
  expect(res.code, res.stderr).toBe(0)
  return res.stdout
}

/** A number of the `status` table: the row of `entity`, the column headed `column`. */
function tableCell(table: string, entity: string, column: string): number {
  const lines = table.split('\n')
  const header = lines.findIndex((l) => /^entity\s+planned/.test(l))
  const cells = (l: string | undefined) => (l ?? '').trim().split(/\s{2,}/)
  const col = cells(lines[header]).indexOf(column)
  const row = lines.slice(header + 1).find((l) => cells(l)[0] === entity)
  expect(col >= 0 && row !== undefined, `${entity}/${column} in:\n${table}`).toBe(true)
  return Number((cells(row)[col] ?? '').replace(/,/g, ''))
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 40_000): Promise<T> {
  const end = Date.now() + timeoutMs
  for (;;) {
    const v = await read()
    if (ok(v)) {
      return v
    }
    if (Date.now() > end) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`)
    }
    await new Promise((r) => setTimeout(r, 300))
  }
}

/** 3 users and `nMessages` messages planned, and one message the mapping rejected. */
async function seed(dir: string, jobId: string, appId: string, nMessages: number): Promise<void> {
  const store = await openLedger({ dir })
  await store.ensureJob(jobId, appId)
  await store.planItems(jobId, 'users', users(3))
  await store.planItems(jobId, 'messages', messages(nMessages, 3))
  await store.rejectItems(jobId, 'messages', [{ legacyId: 'broken-1', code: 'MAPPING_INVALID', message: 'no sender' }])
  await store.close()
}

it('status answers during a load on the embedded store, without the API key; rejects, runs and writes are refused naming the holder; purge', async () => {
  // 60 requests a minute of 10 items: 400 messages take about 40 s to load.
  const app = await sb.createApp({ id: 'watch-live', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 60, windowMs: 60_000 } })
  const { file, dir } = watchConfig(app, 60, 10)
  await seed(dir, 'watch-live', app.id, 400)

  const load = runCli(['load', '--config', file], writerEnv(app))
  await load.waitFor('loader started')
  // Waited for on the platform (in this process) rather than by a `status` process every 300 ms.
  await until(
    'messages on the platform',
    async () => (await sandboxKeys(sb, app.id, 'messages')).size,
    (n) => n >= 10,
  )
  // The table alone (`status --json` answers through the holder in the tests below): its numbers,
  // the last run, no in-flight-when-died line, and whose process it read through.
  const table = await until(
    'messages done while the load runs',
    () => statusTable(file),
    (t) => tableCell(t, 'messages', 'done') >= 10,
  )
  expect(tableCell(table, 'messages', 'remaining')).toBeGreaterThan(0)
  expect([tableCell(table, 'users', 'done'), tableCell(table, 'users', 'remaining')]).toEqual([3, 0])
  expect(table).toMatch(/last run: #\d+ load running/)
  expect(table).not.toContain('in flight when it died')
  expect(table).toMatch(/read through pid \d+ \(chatferry load, since \d{4}-/)

  // The other read-only commands need the store, or a Postgres ledger: refused naming the holder.
  for (const command of ['rejects', 'runs']) {
    const refused = await runCli([command, '--config', file, '--json'], readerEnv).done
    expect(refused.code, command).toBe(1)
    expect(refused.stderr).toMatch(
      /another chatferry process, pid \d+ \(chatferry load, since \d{4}-[^)]+\), is using the embedded store .*only `status` and `dashboard` read it meanwhile .*set state\.url \(Postgres\) to read while a job runs/,
    )
  }

  // Writes stay refused, naming the holder.
  const retry = await runCli(['retry-rejected', '--config', file], writerEnv(app)).done
  expect(retry.code).toBe(1)
  expect(retry.stderr).toMatch(/another chatferry process, pid \d+ \(chatferry load, since \d{4}-[^)]+\), is using the embedded store/)
  const purgeLive = await runCli(['purge', '--config', file, '--job', 'watch-live', '--yes'], readerEnv).done
  expect(purgeLive.code).toBe(2)
  expect(purgeLive.stderr).toMatch(/not purging job watch-live: .*pid \d+ \(chatferry load/)

  load.child.kill('SIGTERM')
  expect((await load.done).code).toBe(1)

  const rejectsTable = await runCli(['rejects', '--config', file], readerEnv).done
  expect(rejectsTable.code, rejectsTable.stderr).toBe(0)
  expect(rejectsTable.stdout).toMatch(
    /^entity or update\tlegacy id\ttarget key\tcode\treason\nmessages\tbroken-1\t~legacy:broken-1\tMAPPING_INVALID\tno sender\n1 rejected: MAPPING_INVALID 1\n$/,
  )
  // One `runs` (its table) says what `runs --json` would: interrupted, finished (an end time, not
  // `died` or `running`), requests and items done, and no death (no `(…)` column after the counts).
  const text = await runCli(['runs', '--config', file], readerEnv).done
  expect(text.code, text.stderr).toBe(0)
  expect(text.stdout).toMatch(
    /^run\tmode\toutcome\tstarted → ended\tduration\tcounts\n#\d+\tload\tinterrupted\t\d{4}-\S+ → \d{4}-\S+\t\S+\trequests [1-9]\d*, itemsDone [1-9]\d*/,
  )
  expect(text.stdout.split('\n')[1]!.split('\t')[6] ?? '').not.toMatch(/^\(/)

  const noYes = await runCli(['purge', '--config', file, '--job', 'watch-live'], readerEnv).done
  expect(noYes.code).toBe(2)
  expect(noYes.stderr).toMatch(/add --yes/)
  const purged = await runCli(['purge', '--config', file, '--job', 'watch-live', '--yes'], readerEnv).done
  expect(purged.code, purged.stderr).toBe(0)
  expect(purged.stdout).toMatch(
    /^purged job watch-live from the embedded store in .*: 404 items, 0 update intents, \d+ batches, 0 cursors, 1 runs, 0 reports, 0 id mappings, \d+ worker rows, 0 accepted rejects, 1 job row; no pg-boss queue/,
  )
  const gone = await runCli(['status', '--config', file, '--job', 'watch-live'], readerEnv).done
  expect(gone.code).toBe(2)
  expect(gone.stderr).toMatch(/job watch-live not found: no jobs yet/)
  // (`runs` and the other commands refuse an unknown job the same way: test/integration/cli/cli-exits.test.ts.)
}, 120_000)

it('a SIGKILLed load shows as interrupted with its in-flight items; the next load records it and sends them', async () => {
  // Every answer takes 20 s while the first load runs: its batches are still on the wire when it
  // dies, however long the status process that saw them in flight took to answer (3 s was not
  // always enough on a loaded machine: the batches had settled by the kill).
  const app = await sb.createApp({
    id: 'watch-kill',
    apiKey: testSecret('apikey'),
    settings: { requestsPerMinute: 6000, windowMs: 10_000, faults: { latencyMs: { min: 20_000, max: 20_000 } } },
  })
  const { file, dir } = watchConfig(app, 6000)
  await seed(dir, 'watch-kill', app.id, 100)

  const load = runCli(['load', '--config', file], writerEnv(app))
  await load.waitFor('loader started')
  const inFlight = await until(
    'items in flight',
    () => statusJson(file),
    (s) => s.entities.some((e) => e.sent > 0),
  )
  expect(inFlight.runs[0]).toMatchObject({ status: 'running' })
  load.child.kill('SIGKILL')
  expect((await load.done).signal).toBe('SIGKILL')

  const dead = await statusJson(file)
  const sent = dead.entities.reduce((n, e) => n + e.sent, 0)
  expect(sent).toBeGreaterThan(0)
  expect(dead.runs[0]).toMatchObject({ mode: 'load', status: 'interrupted' })
  expect(dead.runs[0]!.died).toMatch(/its process \(pid \d+ on this machine\) is gone/)
  expect(dead.inFlightWhenDied).toBe(sent)
  const table = await runCli(['status', '--config', file], readerEnv).done
  expect(table.stdout).toContain(`in flight when it died: ${sent} items — they are sent again on the next run`)
  expect(table.stdout).toMatch(/last run: #\d+ load interrupted, .* its process died: its process \(pid \d+ on this machine\) is gone/)
  const runs = JSON.parse((await runCli(['runs', '--config', file, '--json'], readerEnv).done).stdout) as { status: string; died: string | null }[]
  expect(runs[0]).toMatchObject({ status: 'interrupted' })
  expect(runs[0]!.died).not.toBeNull()

  // The next write command writes the death into the ledger; the load then sends everything.
  await sb.settings(app.id, { faults: { latencyMs: { min: 0, max: 0 } } })
  const again = await runCli(['load', '--config', file], writerEnv(app)).done
  // Exit 3: everything sent, and the seed's one mapping reject.
  expect(again.code, again.stderr).toBe(3)
  const store = await openLedger({ dir })
  try {
    const rows = await store.listRuns('watch-kill')
    expect(rows.map((r) => r.status)).toEqual(['rejected', 'interrupted'])
    expect(rows[1]!.error).toMatch(/^the process died: its process \(pid \d+ on this machine\) is gone/)
    expect(rows[1]!.finishedAt?.getTime()).toBe(rows[1]!.heartbeatAt.getTime())
    const stats = await store.entityStats('watch-kill')
    expect(stats.reduce((n, e) => n + e.sent + e.planned, 0)).toBe(0)
  } finally {
    await store.close()
  }
}, 120_000)

it('Postgres ledger: runs tells a silent run on another machine (interrupted) from a live one; purge waits for the live one', async () => {
  const tdb = await createTestDatabase('cf_watch')
  try {
    const app = await sb.createApp({ id: 'watch-pg', apiKey: testSecret('apikey') })
    const base = mkdtempSync(join(tmpdir(), 'cf-watch-pg-'))
    const file = join(base, 'chatferry.yaml')
    writeFileSync(
      file,
      `target:\n  appId: ${app.id}\n  region: us\n  apiKey: \${CHATFERRY_API_KEY}\n  baseUrl: ${app.baseUrl}\n` +
        `state:\n  url: ${tdb.url}\n` +
        `source:\n  connector: mattermost\n  url: postgres://mmuser:\${CF_WATCH_SOURCE_PASSWORD}@127.0.0.1:5432/nowhere\n`,
    )
    const store = await openLedger({ url: tdb.url })
    let liveId: number
    try {
      await store.ensureJob('watch-pg', app.id)
      await store.planItems('watch-pg', 'users', users(3))
      const silent = await store.startRun('watch-pg', 'worker', 'elsewhere#0000/4242/abcd')
      await sql`update chatferry.runs set heartbeat_at = now() - interval '2 minutes' where id = ${silent}`.execute(inspectLedger(store))
      liveId = await store.startRun('watch-pg', 'worker', 'elsewhere#0000/4343/efgh')
    } finally {
      await store.close()
    }
    const runs = await runCli(['runs', '--config', file, '--json'], readerEnv).done
    expect(runs.code, runs.stderr).toBe(0)
    const list = JSON.parse(runs.stdout) as { id: number; status: string; died: string | null }[]
    expect(list.map((r) => r.status)).toEqual(['running', 'interrupted'])
    expect(list[1]!.died).toMatch(/^no heartbeat for 1\d\d s \(last \d{4}-/)
    const status = await runCli(['status', '--config', file, '--json'], readerEnv).done
    expect(status.code, status.stderr).toBe(0)

    const refused = await runCli(['purge', '--config', file, '--job', 'watch-pg', '--yes'], readerEnv).done
    expect(refused.code).toBe(2)
    expect(refused.stderr).toMatch(
      new RegExp(`not purging job watch-pg: run #${liveId} \\(worker, elsewhere#0000/4343/efgh, last heartbeat .*\\) is live; stop it first`),
    )
    const check = await openLedger({ url: tdb.url })
    try {
      expect(await check.listJobs()).toEqual([{ id: 'watch-pg', appId: app.id }])
      await check.finishRun(liveId, 'succeeded')
    } finally {
      await check.close()
    }
    const purged = await runCli(['purge', '--config', file, '--job', 'watch-pg', '--yes', '--json'], readerEnv).done
    expect(purged.code, purged.stderr).toBe(0)
    expect(JSON.parse(purged.stdout)).toEqual({
      jobId: 'watch-pg',
      removed: { items: 3, updates: 0, batches: 0, cursors: 0, runs: 2, reports: 0, idMap: 0, workers: 0, acceptedRejects: 0, jobs: 1 },
      queue: null,
      schedule: null,
    })
    expect((await runCli(['status', '--config', file, '--job', 'watch-pg'], readerEnv).done).code).toBe(2)
  } finally {
    await dropWithin(tdb)
  }
}, 60_000)

it('during `run` on the embedded store: status shows the run live as one row (its plan and its loader), kept fresh by its heartbeat', async () => {
  // 60 requests a minute of 10 items: the ~450 rows take about 45 s to load.
  const app = await sb.createApp({ id: 'watch-run', apiKey: testSecret('apikey'), settings: { requestsPerMinute: 60, windowMs: 60_000 } })
  const base = mkdtempSync(join(tmpdir(), 'cf-watch-run-'))
  const legacy = join(base, 'legacy.sqlite')
  createSampleLegacyDatabase(legacy, Date.now(), { users: 20, channels: 3, groupDms: 1, groupMessages: 350, directMessages: 50 })
  const file = join(base, 'chatferry.yaml')
  writeFileSync(
    file,
    stringify({
      target: {
        appId: app.id,
        region: 'us',
        apiKey: '${CHATFERRY_API_KEY}',
        baseUrl: app.baseUrl,
        quota: { requestsPerMinute: 60, itemsPerRequest: 10 },
      },
      state: { dir: join(base, '.chatferry') },
      source: {
        connector: 'generic-sql',
        url: `sqlite:${legacy}`,
        entities: {
          users: { query: SAMPLE_QUERIES.users, timeFormat: 'epoch-ms' },
          groups: { query: SAMPLE_QUERIES.groups, timeFormat: 'epoch-ms' },
          members: { query: SAMPLE_QUERIES.members, timeFormat: 'epoch-ms' },
          messages: { query: SAMPLE_QUERIES.messages, timeFormat: 'epoch-ms' },
        },
      },
    }),
  )
  const run = runCli(['run', '--config', file], { CHATFERRY_API_KEY: app.apiKey })
  await run.waitFor('loader started', 60_000)
  // Past two heartbeats of the run row (every 5 s) while the loader works.
  await new Promise((r) => setTimeout(r, 11_000))
  const asked = Date.now()
  const live = await statusJson(file)
  // One run, one row (src/job/job-run.ts): no second row for its loader.
  expect(live.runs).toMatchObject([{ mode: 'run', status: 'running' }])
  const runRow = live.runs[0]!
  // Beating while it loads (every 5 s), not only at the end of planning (before 'loader started', 11 s before `asked`).
  expect(Date.parse(runRow.heartbeatAt)).toBeGreaterThan(asked - 7000)
  expect(runCounts(runRow.stats).sourceRows).toBeGreaterThan(400)
  // The loader's counters are in the same row, written with its heartbeat.
  expect(runCounts(runRow.stats).requests).toBeGreaterThan(0)
  const done = live.entities.reduce((n, e) => n + e.done, 0)
  expect(done).toBeGreaterThan(0)
  expect(live.entities.reduce((n, e) => n + e.remaining, 0)).toBeGreaterThan(0)

  run.child.kill('SIGTERM')
  expect((await run.done).code).toBe(1)
  const after = JSON.parse((await runCli(['runs', '--config', file, '--json'], readerEnv).done).stdout) as { mode: string; status: string }[]
  expect(after.map((r) => `${r.mode} ${r.status}`)).toEqual(['run interrupted'])
}, 120_000)
