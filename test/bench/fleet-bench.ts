/**
 * Fleet benchmark (numbers, not pass/fail): 50 tenants with small histories (50 users, 50 groups,
 * 100 members, 1,000 messages each: 1,200 items in 24 full requests), each into its own app of one
 * sandbox (real Postgres), every app at the same quota; `chatferry fleet run` as a process, alone
 * (one loading process) and then with two `chatferry fleet worker` processes (three), each on a
 * fresh ledger and sandbox. From the sandbox's request log:
 * - **aggregate efficiency**: items per minute the apps received ÷ (tenants × quota × 50), over
 *   the window when every tenant was loading (from the first request of the last tenant to start to
 *   the last request of the first tenant to finish; target ≥ 0.95), and over the whole load (from
 *   the first request to the last, where the tenants' staggered starts and ends count against it).
 *   A request's slot is the quota interval after it, and its items count for the part of that slot
 *   inside the window. Counting each request whole at its arrival (printed as "counted at
 *   arrival", the bench's number until 2026-11-26) reads low by about one slot per tenant: the
 *   window is bounded by two tenants' own requests, and every other tenant, started a little
 *   later than the first and earlier than the last, has its first request before the window and
 *   its last after it, so a perfect pace reads 22 of 23.8 slots (0.92) with 24 requests a tenant;
 *   a start spread wider than one interval gives random phases and about 0.95;
 * - **start spread**: from the `fleet run` process's start to the first request of the last tenant;
 * - 429s (expected 0) and the tenants that did not finish.
 *
 * `node test/bench/fleet-bench.ts [--tenants N] [--quota R] [--only 1|3] [--plan-concurrency N]` (or `npm run bench --
 * fleet …`). Needs a Postgres server: $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres.
 * --quota: import requests per minute of every app (default 12: 50 apps × 12 = 600 requests a
 * minute, 30,000 items, the most this 2-core machine's sandbox and ledger take with room to spare).
 */
import './bench-cli.ts'

import { type ChildProcess, spawn } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, resolve } from 'node:path'

import { keyVault } from '../../src/fleet/key-vault.ts'
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts'
import { ENTITIES } from '../../src/target/schemas.ts'
import { bindTenants, writeFleetFile } from '../helpers/fleet-fixtures.ts'
import { type TenantHistory, tenantSource, writeTenantLegacy } from '../helpers/fleet-legacy.ts'
import { BENCH_SERVER_URL, benchDatabases } from './bench-databases.ts'

const CLI = resolve(import.meta.dirname, '../../src/cli/main.ts')
const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const TENANTS = Number(arg('--tenants') ?? 50)
const QUOTA = Number(arg('--quota') ?? 12)
const only = arg('--only')
const PLAN_CONCURRENCY = arg('--plan-concurrency') ?? '8'
const HISTORY: TenantHistory = { users: 50, groups: 50, membersPerGroup: 2, messages: 1000 }
const ITEMS = HISTORY.users + HISTORY.groups + HISTORY.groups * HISTORY.membersPerGroup + HISTORY.messages
const serverUrl = BENCH_SERVER_URL

const databases = benchDatabases(serverUrl)
const freshDatabase = (prefix: string) => databases.fresh(prefix)

function cli(args: readonly string[], env: Record<string, string>): { child: ChildProcess; done: Promise<number | null>; output: () => string } {
  const child = spawn(process.execPath, [CLI, ...args], {
    env: { ...process.env, CHATFERRY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  let out = ''
  child.stdout?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)))
  child.stderr?.on('data', (d: Buffer) => (out = (out + d.toString()).slice(-20_000)))
  return { child, done: new Promise((r) => child.on('exit', (code) => r(code))), output: () => out }
}

interface Measured {
  readonly processes: number
  readonly exitCode: number | null
  readonly steadyRatio: number
  /** The same window with each request counted whole at its arrival (the bench's count before 2026-11-26, biased low by about a slot per tenant). */
  readonly steadyByArrival: number
  readonly steadySeconds: number
  readonly wholeRatio: number
  readonly wholeSeconds: number
  readonly spreadSeconds: number
  /** Seconds from `fleet run` to each tenant's first request: quartiles. */
  readonly firstRequests: readonly number[]
  readonly rateLimited: number
  readonly unfinished: number
  /** Per tenant: (its requests − 1) × the quota's interval ÷ the time from its first request to its last; the lowest and the median. */
  readonly tenantPace: { min: number; median: number }
  /** The longest pause between two requests of one tenant, in seconds. */
  readonly longestGapSeconds: number
}

async function requestsPerTenant(sandbox: Sandbox, apps: ReadonlyMap<string, { id: string }>) {
  const out = []
  for (const [tenant, app] of apps) {
    const log = (await sandbox.requests(app.id)).filter((e) => ENTITIES.includes(e.endpoint as never))
    out.push({ tenant, log })
  }
  return out
}

/** How closely each tenant's requests followed its quota's spacing. */
function pace(arrivals: readonly number[][]): Pick<Measured, 'tenantPace' | 'longestGapSeconds'> {
  const interval = 60_000 / QUOTA
  const ratios = arrivals.map((t) => {
    const s = [...t].sort((a, b) => a - b)
    return s.length < 2 ? 1 : ((s.length - 1) * interval) / ((s.at(-1) as number) - (s[0] as number))
  })
  const gaps = arrivals.flatMap((t) => [...t].sort((a, b) => a - b).map((x, i, s) => (i === 0 ? 0 : x - (s[i - 1] as number))))
  const sorted = [...ratios].sort((a, b) => a - b)
  return { tenantPace: { min: sorted[0] ?? 0, median: sorted[Math.floor(sorted.length / 2)] ?? 0 }, longestGapSeconds: Math.max(0, ...gaps) / 1000 }
}

async function scenario(processes: number): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'cf-fleet-bench-'))
  const ledgerUrl = await freshDatabase('bench_fleet_ledger')
  const sandboxUrl = await freshDatabase('bench_fleet_sbx')
  const sandbox = await startSandbox({ state: { url: sandboxUrl, poolSize: 10 }, maxApps: TENANTS + 5 })
  try {
    const fleetKey = randomBytes(32)
    const apps = new Map<string, { id: string; apiKey: string }>()
    const tenants = []
    for (let i = 0; i < TENANTS; i++) {
      const id = `t${String(i).padStart(2, '0')}`
      apps.set(id, await sandbox.createApp({ id: `bench-${id}`, settings: { requestsPerMinute: QUOTA, windowMs: 60_000 } }))
      const file = join(dir, `${id}.db`)
      writeTenantLegacy(file, id, HISTORY)
      tenants.push({ id, source: tenantSource(file, id) })
    }
    await bindTenants(ledgerUrl, 'bench', keyVault(fleetKey), apps)
    const fleetFile = writeFleetFile(join(dir, 'fleet.yaml'), {
      fleetId: 'bench',
      ledgerUrl,
      sandboxUrl: sandbox.url,
      tenants,
      perWindow: QUOTA,
      windowMs: 60_000,
      load: { leaseSeconds: 60 },
      timeoutMs: 30_000,
    })
    const env = { CHATFERRY_FLEET_KEY: fleetKey.toString('base64') }
    const workers = Array.from({ length: processes - 1 }, () => cli(['fleet', 'worker', '--fleet', fleetFile], env))
    const startedAt = Date.now()
    const run = cli(['fleet', 'run', '--fleet', fleetFile, '--plan-concurrency', PLAN_CONCURRENCY], env)
    const exitCode = await run.done
    for (const w of workers) {
      w.child.kill('SIGTERM')
    }
    await Promise.all(workers.map((w) => w.done))
    if (exitCode !== 0) {
      process.stderr.write(run.output().slice(-4000))
    }
    await sandbox.whenIdle()
    const per = await requestsPerTenant(sandbox, apps)
    const ok = (e: { status: number | null }) => e.status !== null && e.status >= 200 && e.status < 300
    const firsts = per.map((p) => Math.min(...p.log.map((e) => e.receivedAtMs)))
    const lasts = per.map((p) => Math.max(...p.log.map((e) => e.receivedAtMs)))
    const steadyFrom = Math.max(...firsts)
    const steadyTo = Math.min(...lasts)
    const all = per.flatMap((p) => p.log)
    const interval = 60_000 / QUOTA
    // Each request's items count for the part of its slot (the interval after it) that lies in the
    // window [from, to + interval): a whole count at arrival would miss, for every tenant whose
    // phase differs from the tenants that bound the window, the slot of a request just before it.
    const itemsIn = (from: number, to: number) =>
      all
        .filter(ok)
        .reduce(
          (a, e) =>
            a + ((e.itemCount ?? 0) * Math.max(0, Math.min(e.receivedAtMs + interval, to + interval) - Math.max(e.receivedAtMs, from))) / interval,
          0,
        )
    const itemsArrivedIn = (from: number, to: number) =>
      all.filter((e) => ok(e) && e.receivedAtMs >= from && e.receivedAtMs <= to).reduce((a, e) => a + (e.itemCount ?? 0), 0)
    const ideal = (ms: number) => (TENANTS * QUOTA * 50 * ms) / 60_000
    const wholeFrom = Math.min(...firsts)
    const wholeTo = Math.max(...lasts)
    const done = per.filter((p) => p.log.filter(ok).reduce((a, e) => a + (e.committed ?? 0), 0) >= ITEMS).length
    return {
      processes,
      exitCode,
      // A request's slot covers the interval after it: the window [from, to] holds (to − from) / interval + 1 slots.
      steadyRatio: itemsIn(steadyFrom, steadyTo) / ideal(steadyTo - steadyFrom + interval),
      steadyByArrival: itemsArrivedIn(steadyFrom, steadyTo) / ideal(steadyTo - steadyFrom + interval),
      steadySeconds: (steadyTo - steadyFrom) / 1000,
      wholeRatio: itemsIn(wholeFrom, wholeTo) / ideal(wholeTo - wholeFrom + interval),
      wholeSeconds: (wholeTo - wholeFrom) / 1000,
      spreadSeconds: (steadyFrom - startedAt) / 1000,
      firstRequests: [0.25, 0.5, 0.75].map((q) => ([...firsts].sort((a, b) => a - b)[Math.floor(q * firsts.length)]! - startedAt) / 1000),
      rateLimited: all.filter((e) => e.status === 429).length,
      unfinished: TENANTS - done,
      ...pace(per.map((p) => p.log.filter(ok).map((e) => e.receivedAtMs))),
    }
  } finally {
    await sandbox.close()
  }
}

try {
  process.stdout.write(
    `fleet: ${TENANTS} tenants × ${ITEMS} items (${ITEMS / 50} full requests each), every app at ${QUOTA} requests/min × 50 items ` +
      `(fleet ideal ${((TENANTS * QUOTA * 50) / 1000).toFixed(1)}k items/min)\n`,
  )
  for (const processes of only ? [Number(only)] : [1, 3]) {
    const m = await scenario(processes)
    process.stdout.write(
      `${processes} loading process${processes === 1 ? '' : 'es'} (fleet run${processes > 1 ? ` + ${processes - 1} fleet workers` : ''}): exit ${m.exitCode}; ` +
        `all tenants loading (${m.steadySeconds.toFixed(0)} s): ${m.steadyRatio.toFixed(3)} of ${TENANTS} × quota (target ≥ 0.95; counted at arrival: ${m.steadyByArrival.toFixed(3)}); ` +
        `whole load (${m.wholeSeconds.toFixed(0)} s): ${m.wholeRatio.toFixed(3)}; fleet run → first request of the last tenant: ${m.spreadSeconds.toFixed(1)} s ` +
        `(quartiles ${m.firstRequests.map((x) => x.toFixed(1)).join(' / ')} s); ` +
        `429s: ${m.rateLimited}; tenants unfinished: ${m.unfinished}; each tenant's pace vs its quota: median ${m.tenantPace.median.toFixed(3)}, ` +
        `lowest ${m.tenantPace.min.toFixed(3)}, longest pause ${m.longestGapSeconds.toFixed(1)} s\n`,
    )
  }
} finally {
  await databases.dropAll()
}
