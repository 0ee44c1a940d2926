/**
 * Delta benchmark (issue 13): does a delta's cost grow with the changes, not with the history?
 *
 * 1. **History**: a generic-sql source on Postgres with 100k and 1M messages (`--sizes`; `--quick`:
 *    10k and 100k), fully planned into a fresh Postgres ledger and marked loaded; then 1,000 rows of
 *    mixed kinds change in the source (600 new messages, 200 edited, 50 deleted, 60 users renamed,
 *    20 deactivated (or reactivated), 20 groups made private (or public), 50 members promoted (or demoted)) and `run --delta`'s planning half
 *    runs: the delta read, the classification against the ledger, the update intents recorded, the
 *    key-set comparison of users, groups and members. Prints each time and time(large) ÷
 *    time(small) (target ≤ 1.5).
 * 2. **Update lane**: a small job loaded for real into the in-process sandbox, `--changes` users
 *    renamed (default 1,000; `--quick` 300), then `chatferry run --delta` as a process with
 *    `target.chatQuota.requestsPerMinute` = `--chat-rpm` (default 600): the lane's chat requests per
 *    minute from the sandbox's request log (first to last `users.update`) ÷ the quota (target ≥ 0.95).
 *
 *   node test/bench/delta-bench.ts [--sizes=100000,1000000] [--quick] [--only=history|lane] [--chat-rpm=N] [--changes=N] [--concurrency=N] [--repeat=N] [--verbose]
 *   npm run bench -- delta [the same flags, in the --name=value form]
 *
 * Source databases `cf_bench_delta_src_<size>` are kept and reused (`--regenerate` rebuilds them);
 * the ledgers are created and dropped per run. Postgres: `TEST_DATABASE_URL` or the local one.
 */
import './bench-cli.ts'

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import pg from 'pg'
import { stringify } from 'yaml'

import { openCommandContext } from '../../src/cli/open-command-context.ts'
import { planFromSource } from '../../src/job/plan-from-source.ts'
import { createLogger } from '../../src/logger.ts'
import { startSandbox } from '../../src/sandbox/index.ts'
import { inspectLedger } from '../../src/state/inspect-ledger.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { benchDbUrl as dbUrl, freshBenchJob, withBenchAdmin as admin } from './mattermost-bench-db.ts'

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
/** `--name=value` (what `npm run bench -- delta …` passes on: test/bench/run.ts takes a bare word for a benchmark's name), or `--name value` when run directly. */
const value = (name: string) => {
  const joined = args.find((a) => a.startsWith(`--${name}=`))
  if (joined !== undefined) {
    return joined.slice(name.length + 3)
  }
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const quick = flag('quick')
const sizes = (value('sizes') ?? (quick ? '10000,100000' : '100000,1000000')).split(',').map(Number)
const only = value('only')
const chatRpm = Number(value('chat-rpm') ?? 600)
const laneChanges = Number(value('changes') ?? (quick ? 300 : 1000))
/** Deltas timed per size (the median is compared). */
const repeat = Number(value('repeat') ?? 3)
/** Updates in flight per process (`load.updateConcurrency`; unset: its default). */
const laneConcurrency = value('concurrency')
const fmt = (ms: number) => `${(ms / 1000).toFixed(2)} s`
const USERS = 2000
const GROUPS = 50
const POLICIES = { retention: { retentionDays: 100_000 } }

/** The in-house schema and its queries (every table has its change time, indexed for delta reads). */
const SCHEMA = [
  'CREATE TABLE people (id text PRIMARY KEY, name text NOT NULL, gone timestamptz, updated_at timestamptz NOT NULL)',
  'CREATE TABLE rooms (id text PRIMARY KEY, name text NOT NULL, kind text NOT NULL, updated_at timestamptz NOT NULL)',
  'CREATE TABLE room_people (room text, person text, role text, updated_at timestamptz NOT NULL, PRIMARY KEY (room, person))',
  `CREATE TABLE lines (id bigint PRIMARY KEY, author text NOT NULL, room text NOT NULL, body text, sent timestamptz NOT NULL,
     edited timestamptz, removed timestamptz, updated_at timestamptz NOT NULL)`,
  'CREATE INDEX lines_sent ON lines (sent, id)',
  // What a delta read filters by: without these, every delta scans the whole table.
  'CREATE INDEX lines_updated ON lines (updated_at)',
  'CREATE INDEX people_updated ON people (updated_at)',
  'CREATE INDEX rooms_updated ON rooms (updated_at)',
  'CREATE INDEX room_people_updated ON room_people (updated_at)',
]

function sourceConfig(url: string) {
  return {
    connector: 'generic-sql',
    url,
    pageSize: 5000,
    entities: {
      users: { query: 'SELECT id, name, gone AS deactivated_at, updated_at FROM people' },
      groups: { query: 'SELECT id, name, kind AS type, updated_at FROM rooms' },
      members: { query: 'SELECT room AS group_id, person AS user_id, role AS scope, updated_at FROM room_people' },
      messages: {
        query: `SELECT id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text, sent AS sent_at,
                  edited AS edited_at, removed AS deleted_at, updated_at FROM lines`,
        // Keyed by id: the default keys (sent_at, id) make every read, deltas included, run the
        // duplicate-id screen over the whole table (connectors/generic-sql/README.md).
        keys: ['id'],
      },
    },
  }
}

async function withClient<T>(url: string, f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

/** `cf_bench_delta_src_<size>`: users, groups, members and `size` messages over the last 90 days. */
async function ensureSource(size: number): Promise<string> {
  const name = `cf_bench_delta_src_${size}`
  const url = dbUrl(name)
  const exists = await admin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1)
  if (exists && !flag('regenerate')) {
    const n = await withClient(
      url,
      async (c) => (await c.query('SELECT count(*)::int AS n FROM lines WHERE id <= $1', [size]).catch(() => ({ rows: [{ n: -1 }] }))).rows[0].n,
    )
    if (n === size) {
      return url
    }
  }
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${name}`)
  })
  const started = performance.now()
  await withClient(url, async (c) => {
    for (const s of SCHEMA) {
      await c.query(s)
    }
    const old = "now() - interval '90 days'"
    await c.query(`INSERT INTO people SELECT 'u' || i, 'User ' || i, NULL, ${old} FROM generate_series(1, ${USERS}) i`)
    await c.query(`INSERT INTO rooms SELECT 'g' || i, 'Room ' || i, 'public', ${old} FROM generate_series(1, ${GROUPS}) i`)
    await c.query(`INSERT INTO room_people SELECT 'g' || (1 + i % ${GROUPS}), 'u' || i, 'participant', ${old} FROM generate_series(1, ${USERS}) i`)
    await c.query(
      `INSERT INTO lines SELECT i, 'u' || (1 + (i * 7) % ${USERS}), 'g' || (1 + ((i * 7) % ${USERS}) % ${GROUPS}), 'message ' || i,
         ${old} + (i::float / ${size}) * interval '89 days', NULL, NULL, ${old} + (i::float / ${size}) * interval '89 days'
       FROM generate_series(1, ${size}) i`,
    )
    await c.query('VACUUM ANALYZE')
  })
  process.stdout.write(`generated ${name} in ${((performance.now() - started) / 1000).toFixed(1)} s\n`)
  return url
}

/** The generated history again: the messages an earlier run added are removed (its other changes stay history). */
async function resetSource(url: string, size: number): Promise<void> {
  await withClient(url, (c) => c.query('DELETE FROM lines WHERE id > $1', [size]))
}

/**
 * 1,000 changed rows of mixed kinds, all changed now. Deactivation, group type and scope flip, so
 * every run changes each kind again on a kept database.
 */
async function changeSource(url: string, size: number, round: number): Promise<number> {
  return withClient(url, async (c) => {
    const stamp = Date.now()
    const counts = [
      await c.query(
        `INSERT INTO lines SELECT ${size} + ${round * 1000} + i, 'u' || (1 + i % ${USERS}), 'g' || (1 + (i % ${USERS}) % ${GROUPS}), 'new ' || i, now(), NULL, NULL, now() FROM generate_series(1, 600) i`,
      ),
      await c.query(
        `UPDATE lines SET body = 'edited ${stamp} ' || id, edited = now(), updated_at = now() WHERE id IN (SELECT 1 + (${size} / 2 + i * 37) % ${size} FROM generate_series(1, 200) i)`,
      ),
      await c.query(
        `UPDATE lines SET removed = now(), updated_at = now() WHERE id IN (SELECT 1 + (${size} / 3 + ${stamp % 100_000} + i * 41) % ${size} FROM generate_series(1, 50) i)`,
      ),
      await c.query(
        `UPDATE people SET name = 'Renamed ${stamp} ' || id, updated_at = now() WHERE id IN (SELECT 'u' || (i * 13) FROM generate_series(1, 60) i)`,
      ),
      await c.query(
        `UPDATE people SET gone = CASE WHEN gone IS NULL THEN now() END, updated_at = now() WHERE id IN (SELECT 'u' || (1000 + i * 17) FROM generate_series(1, 20) i)`,
      ),
      await c.query(
        `UPDATE rooms SET kind = CASE kind WHEN 'public' THEN 'private' ELSE 'public' END, updated_at = now() WHERE id IN (SELECT 'g' || i FROM generate_series(1, 20) i)`,
      ),
      await c.query(
        `UPDATE room_people SET role = CASE role WHEN 'moderator' THEN 'participant' ELSE 'moderator' END, updated_at = now() WHERE person IN (SELECT 'u' || (i * 29) FROM generate_series(1, 50) i)`,
      ),
    ]
    return counts.reduce((a, r) => a + (r.rowCount ?? 0), 0)
  })
}

/** The history part for one size: bulk plan, mark loaded, change, time the delta's planning half. */
async function history(size: number): Promise<{ size: number; changed: number; deltaMs: number; bulkMs: number; intents: number }> {
  const src = await ensureSource(size)
  await resetSource(src, size)
  const stateName = `cf_bench_delta_state_${size}`
  const { dir, cfg } = await freshBenchJob(stateName, 'chatferry-delta-bench', { source: sourceConfig(src), policies: POLICIES })
  const ctx = await openCommandContext({ config: cfg })
  try {
    // The bulk load's ledger: planned from the whole source, then every item as if loaded.
    const bulkStart = performance.now()
    await planFromSource(ctx, { mode: 'full' })
    const db = inspectLedger(ctx.store)
    await sql`update chatferry.items set status = 'done', done_reason = 'created', loaded_hash = payload_hash where job_id = ${ctx.jobId} and status = 'planned'`.execute(
      db,
    )
    await sql`analyze chatferry.items`.execute(db)
    const bulkMs = performance.now() - bulkStart
    // Several deltas in a row, 1,000 changes each: the median is what a scheduled delta costs.
    const times: number[] = []
    // Rows each delta read: the changes, and those the lookback (`delta.lookbackSeconds`) read again.
    const read: number[] = []
    let changed = 0
    for (let round = 0; round < repeat; round++) {
      changed = await changeSource(src, size, round)
      const started = performance.now()
      const summary = await planFromSource(ctx, { mode: 'delta', ...(flag('verbose') ? { logger: createLogger() } : {}) })
      times.push(performance.now() - started)
      read.push(Object.values(summary.entities).reduce((a, e) => a + e.sourceRows, 0))
    }
    const deltaMs = [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)] ?? 0
    process.stdout.write(`  ${size.toLocaleString('en')}: deltas ${times.map((t, i) => `${fmt(t)} (${read[i]} rows read)`).join(', ')}\n`)
    const intents = await sql<{ n: number }>`select count(*)::int as n from chatferry.updates where job_id = ${ctx.jobId}`.execute(db)
    return { size, changed, deltaMs, bulkMs, intents: intents.rows[0]?.n ?? 0 }
  } finally {
    await ctx.close()
    rmSync(dir, { recursive: true, force: true })
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`))
  }
}

/** The lane part: users renamed after a real load into the sandbox; the lane's chat rate from the request log. */
async function lane(): Promise<{ updates: number; rpm: number; ratio: number; rejected: number }> {
  const src = await ensureSource(2000)
  const stateName = 'cf_bench_delta_lane_state'
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${stateName}`)
  })
  const sb = await startSandbox({ defaults: { requestsPerMinute: 6000, chatRequestsPerMinute: 100_000, retentionDays: 100_000 } })
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-delta-bench-'))
  try {
    const app = await sb.createApp({ id: 'lanebench' })
    const cfg = join(dir, 'chatferry.yaml')
    writeFileSync(
      cfg,
      stringify({
        target: {
          appId: app.id,
          region: 'us',
          apiKey: app.apiKey,
          baseUrl: app.baseUrl,
          quota: { requestsPerMinute: 6000 },
          chatQuota: { requestsPerMinute: chatRpm },
        },
        state: { url: dbUrl(stateName) },
        source: sourceConfig(src),
        policies: POLICIES,
        load: { quotaWindowMs: 10_000 },
      }),
    )
    const bulk = await runCli(['run', '--config', cfg], { CHATFERRY_LOG_LEVEL: 'warn' }).done
    if (bulk.code !== 0) {
      throw new Error(`the lane's bulk load exited ${bulk.code}: ${bulk.stderr.slice(-2000)}`)
    }
    await withClient(src, (c) =>
      c.query(
        `UPDATE people SET name = 'Lane ${Date.now()} ' || id, updated_at = now() WHERE id IN (SELECT 'u' || i FROM generate_series(1, ${laneChanges}) i)`,
      ),
    )
    const env = { CHATFERRY_LOG_LEVEL: 'warn', ...(laneConcurrency === undefined ? {} : { CHATFERRY_LOAD_UPDATE_CONCURRENCY: laneConcurrency }) }
    const delta = await runCli(['run', '--delta', '--config', cfg], env).done
    if (delta.code !== 0) {
      throw new Error(`the lane's delta exited ${delta.code}: ${delta.stderr.slice(-2000)}`)
    }
    await sb.whenIdle()
    const calls = (await sb.requests(app.id)).filter((r) => r.endpoint === 'users.update')
    const times = calls.map((r) => r.receivedAtMs).sort((a, b) => a - b)
    const spanMs = (times.at(-1) ?? 0) - (times[0] ?? 0)
    const rpm = spanMs > 0 ? ((calls.length - 1) / spanMs) * 60_000 : 0
    return { updates: calls.length, rpm, ratio: rpm / chatRpm, rejected: calls.filter((r) => r.status !== 200).length }
  } finally {
    await sb.close()
    rmSync(dir, { recursive: true, force: true })
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`))
  }
}

async function main(): Promise<void> {
  if (only === undefined || only === 'history') {
    const results = []
    for (const size of sizes) {
      const r = await history(size)
      results.push(r)
      process.stdout.write(
        `history ${size.toLocaleString('en')} messages: ${r.changed} rows changed → delta read + classify + intents ${fmt(r.deltaMs)} (median of ${repeat}) ` +
          `(${r.intents} update intents in all; bulk plan + mark loaded ${fmt(r.bulkMs)})\n`,
      )
    }
    const [small, large] = [results[0], results.at(-1)]
    if (small && large && small !== large) {
      process.stdout.write(
        `delta time at ${large.size.toLocaleString('en')} ÷ at ${small.size.toLocaleString('en')}: ${(large.deltaMs / small.deltaMs).toFixed(2)} (target ≤ 1.5)\n`,
      )
    }
  }
  if (only === undefined || only === 'lane') {
    const r = await lane()
    process.stdout.write(
      `update lane: ${r.updates} users.update calls (${r.rejected} refused), ${laneConcurrency ?? 'default (load.updateConcurrency)'} in flight, at ${r.rpm.toFixed(0)} requests/min with target.chatQuota.requestsPerMinute ${chatRpm}: ` +
        `${r.ratio.toFixed(3)} of the quota (target ≥ 0.95)\n`,
    )
  }
}

await main()
