/**
 * Lease benchmarks (issue 25 item 1): one lease mechanism for units of work (the ledger's
 * `for update skip locked` claims of src/state/lease-units.ts) against the one it replaced (a
 * pg-boss job per batch beside the ledger lease), side by side in one run, alternating, so that the
 * machine's load weighs on both alike:
 * 1. claim latency — one process claiming 8 batches at a time from 2,000 open ones (the old way:
 *    pg-boss `fetch`, then the ledger claim of the fetched ids; the new: one ledger claim):
 *    median and p95 of 200 claims;
 * 2. throughput with 3 workers — three `chatferry worker` processes draining 20,000 messages into
 *    the sandbox without a quota: items/s from the first to the last request;
 * 3. takeover after SIGKILL — a worker (lease 10 s) SIGKILLed mid-run, its leases made to look like
 *    a dead process on another machine (no PID to check), and a second worker started: seconds
 *    from the kill until every batch the dead one held is settled (the lease, plus how soon the
 *    mechanism notices), and from the restart to the second worker's first request.
 *
 * `node test/bench/lease-bench.ts --baseline <dir> [--runs 3] [--only claim|workers|takeover]` (or `npm run bench -- lease
 * --baseline <dir>`): `<dir>` is a checkout of the code before (`git archive <commit> | tar -x -C
 * <dir>` and a `node_modules` link). Without it, only the current code is measured. Needs a
 * Postgres server: $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { join, resolve } from 'node:path'

import pg from 'pg'

import { startSandbox } from '../../src/sandbox/index.ts'
import { openLedger } from '../../src/state/store.ts'
import { messages, users, writeConfig } from '../helpers/ledger-fixtures.ts'
import { BENCH_SERVER_URL, benchDatabases } from './bench-databases.ts'

const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const here = resolve(import.meta.dirname, '../..')
const baseline = arg('--baseline')
const runs = Number(arg('--runs') ?? 3)
const only = arg('--only')
const databases = benchDatabases(BENCH_SERVER_URL)

interface Tree {
  readonly name: string
  readonly root: string
  /** The code before: a pg-boss job per batch (src/load/work-queue.ts). */
  readonly pgBoss: boolean
}
const trees: Tree[] = [
  ...(baseline !== undefined ? [{ name: 'before (pg-boss job + ledger lease)', root: resolve(baseline), pgBoss: true }] : []),
  { name: 'after (ledger lease only)', root: here, pgBoss: existsSync(join(here, 'src/load/work-queue.ts')) },
]

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number
const p95 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * 0.95))] as number

/** Claim latency of one tree: 200 claims of 8 batches. */
async function claimLatency(tree: Tree): Promise<number[]> {
  const url = await databases.fresh('bench_lease_claim')
  const { openLedger: open } = (await import(join(tree.root, 'src/state/store.ts'))) as typeof import('../../src/state/store.ts')
  const store = await open({ url })
  const jobId = 'claims'
  await store.ensureJob(jobId, 'app')
  await store.planItems(jobId, 'users', users(2000))
  const took: number[] = []
  try {
    if (tree.pgBoss) {
      // The code before: src/load/work-queue.ts, present in the baseline checkout only.
      const wq = (await import(join(tree.root, 'src/load/work-queue.ts'))) as {
        startWorkQueue(
          s: unknown,
          o: unknown,
        ): Promise<{
          boss: { fetch(n: string, o: unknown): Promise<{ data: { batchId: number } }[]> }
          name: string
          enqueue(t: unknown, ids: number[]): Promise<void>
          stop(): Promise<void>
        }>
      }
      const queue = await wq.startWorkQueue(store.sessions, { jobId, leaseSeconds: 120, url })
      const pack = store.batches.pack as unknown as (j: string, l: unknown, e: (t: unknown, ids: number[]) => Promise<void>) => Promise<unknown>
      await pack(jobId, { depth: 2000, itemsPerRequest: 1 }, (t, ids) => queue.enqueue(t, ids))
      const claim = store.batches.claim as unknown as (a: unknown) => Promise<unknown[]>
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now()
        const jobs = await queue.boss.fetch(queue.name, { batchSize: 8 })
        await claim({ jobId, batchIds: jobs.map((j) => j.data.batchId), owner: 'h/1/a', leaseSeconds: 120 })
        took.push(performance.now() - t0)
      }
      await queue.stop()
    } else {
      await store.batches.pack(jobId, { depth: 2000, itemsPerRequest: 1 })
      for (let i = 0; i < 200; i++) {
        const t0 = performance.now()
        await store.batches.claim({ jobId, owner: 'h/1/a', leaseSeconds: 120, limit: 8 })
        took.push(performance.now() - t0)
      }
    }
  } finally {
    await store.close()
  }
  return took
}

function cli(tree: Tree, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [join(tree.root, 'bin/chatferry.js'), ...args], {
    env: { ...process.env, CHATFERRY_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout.on('data', (d: Buffer) => (out += d.toString()))
  child.stderr.on('data', (d: Buffer) => (out += d.toString()))
  const done = new Promise<void>((r) => child.on('exit', () => r()))
  const started = async () => {
    while (!out.includes('loader started')) {
      await new Promise((r) => setTimeout(r, 50))
    }
  }
  return { child, done, started, output: () => out }
}

async function query<T>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(text, values)).rows as T[]
  } finally {
    await c.end()
  }
}

/** A ledger with `n` messages (and 100 users) planned for a fresh sandbox app; its configuration file. */
async function plannedJob(sbUrl: string, n: number, rpm: number) {
  const sb = await startSandbox({ state: { url: sbUrl } })
  const app = await sb.createApp({ id: `lease-${Math.random().toString(16).slice(2, 8)}`, settings: { requestsPerMinute: rpm, windowMs: 60_000 } })
  const stateUrl = await databases.fresh('bench_lease_state')
  const store = await openLedger({ url: stateUrl })
  await store.ensureJob('lease', app.id)
  await store.planItems('lease', 'users', users(100))
  for (let i = 0; i < n; i += 10_000) {
    await store.planItems(
      'lease',
      'messages',
      messages(Math.min(10_000, n - i), 100, `m${i}-`).map((m) => ({ ...m, legacyId: m.targetKey })),
    )
  }
  await store.close()
  const cfg = writeConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl,
    requestsPerMinute: Math.min(rpm, 100_000),
    timeoutMs: 5000,
  })
  return { sb, app, stateUrl, cfg }
}

const remaining = async (stateUrl: string) =>
  Number((await query<{ n: string }>(stateUrl, `select count(*) as n from chatferry.items where status in ('planned', 'sent')`))[0]?.n)

/** Three workers draining 20,000 messages: items/s between the first and the last request. */
async function threeWorkers(tree: Tree): Promise<number> {
  const n = 20_000
  const { sb, app, stateUrl, cfg } = await plannedJob(await databases.fresh('bench_lease_sb'), n, 1_000_000)
  try {
    const env = { CHATFERRY_LOAD_CONCURRENCY: '8', CHATFERRY_LOG_LEVEL: 'info' }
    const workers = [0, 1, 2].map(() => cli(tree, ['worker', '--config', cfg, '--job', 'lease'], env))
    const deadline = Date.now() + 300_000
    while ((await remaining(stateUrl)) > 0) {
      if (Date.now() > deadline || workers.every((w) => w.child.exitCode !== null)) {
        throw new Error(`${tree.name}: the workers did not drain the ledger: ${workers[0]?.output().slice(-2000)}`)
      }
      await new Promise((r) => setTimeout(r, 250))
    }
    for (const w of workers) {
      w.child.kill('SIGTERM')
    }
    await Promise.all(workers.map((w) => w.done))
    await sb.whenIdle()
    const log = (await sb.requests(app.id)).filter((r) => r.status === 200)
    const first = Math.min(...log.map((r) => r.receivedAtMs))
    const last = Math.max(...log.map((r) => r.receivedAtMs))
    return (n + 100) / ((last - first) / 1000)
  } finally {
    await sb.close()
  }
}

/** A worker SIGKILLed with batches held, made to look like a process elsewhere; a second worker takes over. */
async function takeover(tree: Tree): Promise<{ drainedHeldS: number; firstRequestS: number }> {
  const { sb, app, stateUrl, cfg } = await plannedJob(await databases.fresh('bench_lease_sb'), 5000, 600)
  try {
    const env = { CHATFERRY_LOAD_CONCURRENCY: '4', CHATFERRY_LOAD_LEASE_SECONDS: '10' }
    const first = cli(tree, ['worker', '--config', cfg, '--job', 'lease'], env)
    await first.started()
    await new Promise((r) => setTimeout(r, 3000))
    first.child.kill('SIGKILL')
    await first.done
    const killedAt = Date.now()
    // Its leases as a dead process on another machine would leave them: nothing to check its PID against.
    const held = await query<{ id: string }>(
      stateUrl,
      `update chatferry.batches set lease_owner = 'elsewhere#0/1/dead' where status = 'open' and lease_expires_at > now() returning id`,
    )
    const restartAt = Date.now()
    const second = cli(tree, ['worker', '--config', cfg, '--job', 'lease'], env)
    let firstRequest: number | undefined
    let drained: number | undefined
    const ids = held.map((h) => Number(h.id))
    while (drained === undefined && Date.now() - killedAt < 120_000) {
      await new Promise((r) => setTimeout(r, 100))
      if (firstRequest === undefined) {
        await sb.whenIdle()
        const after = (await sb.requests(app.id)).filter((r) => r.receivedAtMs >= restartAt)
        firstRequest = after.length > 0 ? Math.min(...after.map((r) => r.receivedAtMs)) : undefined
      }
      const open = await query<{ n: string }>(stateUrl, `select count(*) as n from chatferry.batches where id = any($1) and status = 'open'`, [ids])
      if (Number(open[0]?.n) === 0) {
        drained = Date.now()
      }
    }
    second.child.kill('SIGKILL')
    await second.done
    return { drainedHeldS: ((drained ?? Number.NaN) - killedAt) / 1000, firstRequestS: ((firstRequest ?? Number.NaN) - restartAt) / 1000 }
  } finally {
    await sb.close()
  }
}

try {
  const claims = new Map<Tree, number[]>()
  const tput = new Map<Tree, number[]>()
  const takeovers = new Map<Tree, { drainedHeldS: number; firstRequestS: number }[]>()
  for (let i = 0; i < runs; i++) {
    for (const tree of i % 2 === 0 ? trees : [...trees].reverse()) {
      if (only === undefined || only === 'claim') {
        claims.set(tree, [...(claims.get(tree) ?? []), ...(await claimLatency(tree))])
      }
      if (only === undefined || only === 'workers') {
        tput.set(tree, [...(tput.get(tree) ?? []), await threeWorkers(tree)])
      }
      if (only === undefined || only === 'takeover') {
        takeovers.set(tree, [...(takeovers.get(tree) ?? []), await takeover(tree)])
      }
    }
  }
  const load = (await import('node:os')).loadavg().map((x) => x.toFixed(1))
  console.log(`${runs} run(s) each, alternating; load average at the end ${load.join(' ')}`)
  for (const tree of trees) {
    const c = claims.get(tree) ?? []
    const t = tput.get(tree) ?? []
    const k = takeovers.get(tree) ?? []
    console.log(
      `${tree.name}: claim of 8 batches median ${median(c).toFixed(2)} ms, p95 ${p95(c).toFixed(2)} ms · 3 workers ` +
        `${t.map((x) => x.toFixed(0)).join(', ')} items/s (median ${median(t).toFixed(0)}) · takeover after SIGKILL (lease 10 s, holder elsewhere): ` +
        `held batches settled ${k.map((x) => x.drainedHeldS.toFixed(1)).join(', ')} s after the kill; restart → first request ` +
        `${k.map((x) => x.firstRequestS.toFixed(2)).join(', ')} s`,
    )
  }
} finally {
  await databases.dropAll()
}
