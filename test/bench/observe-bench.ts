/**
 * The cost of watching a load (issue 31): two `chatferry load` processes side by side in one run,
 * each into its own sandbox app at the same quota (600 requests a minute of 50 messages) from its
 * own ledger — one plain, one with its Prometheus metrics on (scraped every 5 s, as Prometheus
 * would at a short interval) and a `chatferry dashboard` open on its job, its view polled every
 * second (`--refresh 1`, as an open page does). Both run at once on the same machine, so the
 * machine's noise falls on both; which one starts first alternates per round.
 *
 * Per round it prints each loader's CPU seconds over the same window (read from /proc), their
 * ratio (observed ÷ plain; target ≤ 1.05), and each one's quota efficiency: items the sandbox took
 * in the window ÷ (quota × 50 × minutes) (target ≥ 0.97 for both). Then the median ratio.
 *
 * `npm run bench -- observe [--quick] [--seconds S] [--rounds N] [--ledger postgres|embedded]`:
 * --quick, 30 s rounds (else 120 s, or --seconds); --rounds, 3 by default; --ledger embedded, each loader on its own embedded
 * store, where the dashboard reads through the loader's socket (its worst case: the loader answers
 * the dashboard's reads itself). Needs a Postgres server for the sandbox (and the ledgers by
 * default): $BENCH_DATABASE_URL or postgres://postgres@127.0.0.1:5432/postgres.
 * `--control` leaves the second loader unwatched too (no metrics, no dashboard): the ratio of two
 * plain loaders, the noise floor any observed ratio is read against.
 * `--cpu-prof DIR` writes each loader's V8 CPU profile (DIR/plain, DIR/observed) when it exits, to
 * see where the observed one's extra time goes (the profiler's own cost falls on both).
 */
import './bench-cli.ts'

import { randomBytes } from 'node:crypto'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import type { DatabaseLocation } from '../../src/db.ts'
import { type Sandbox, startSandbox } from '../../src/sandbox/index.ts'
import { openLedger } from '../../src/state/store.ts'
import { type CliRun, messages, runCli, users, writeConfig } from '../helpers/ledger-fixtures.ts'
import { benchDatabases } from './bench-databases.ts'

const arg = (name: string) => {
  const i = process.argv.indexOf(name)
  return i >= 0 ? process.argv[i + 1] : undefined
}
const quick = process.argv.includes('--quick')
const rounds = Number(arg('--rounds') ?? 3)
const embedded = arg('--ledger') === 'embedded'
const SECONDS = Number(arg('--seconds') ?? (quick ? 30 : 120))
const cpuProfDir = arg('--cpu-prof')
const control = process.argv.includes('--control')
const RPM = 600
const databases = benchDatabases()

/** CPU seconds (user + system) of a process so far, from /proc. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? []
  return (Number(fields[11]) + Number(fields[12])) / 100
}

/** A ledger holding `n` messages (and 100 users) for job `jobId`, ready to load into `appId`. */
async function plannedLedger(jobId: string, appId: string, n: number): Promise<{ location: DatabaseLocation; stateUrl?: string; stateDir?: string }> {
  const stateUrl = embedded ? undefined : await databases.fresh('bench_observe')
  const stateDir = embedded ? join(mkdtempSync(join(tmpdir(), 'cf-observe-')), '.chatferry') : undefined
  const location: DatabaseLocation = stateUrl !== undefined ? { url: stateUrl } : { dir: stateDir as string }
  const store = await openLedger(location)
  await store.ensureJob(jobId, appId)
  await store.planItems(jobId, 'users', users(100))
  const base = Math.floor(Date.now() / 1000) - 86_400 * 30
  for (let i = 0; i < n; i += 10_000) {
    const chunk = messages(Math.min(10_000, n - i), 100, 'm', base).map((m, j) => {
      const k = i + j
      const p = m.payload as Record<string, unknown>
      return { ...m, legacyId: String(k), targetKey: `m${k}`, sortKey: base + k, payload: { ...p, muid: `m${k}`, sentAt: base + k } }
    })
    await store.planItems(jobId, 'messages', chunk)
  }
  await store.close()
  return { location, ...(stateUrl !== undefined ? { stateUrl } : {}), ...(stateDir !== undefined ? { stateDir } : {}) }
}

interface Loader {
  readonly name: 'plain' | 'observed'
  readonly appId: string
  readonly run: CliRun
  readonly cfg: string
  /** What the loader printed so far. */
  printed(): string
}

async function startLoader(sb: Sandbox, name: Loader['name']): Promise<Loader> {
  const app = await sb.createApp({ id: `observe-${name}-${randomBytes(3).toString('hex')}`, settings: { requestsPerMinute: RPM, windowMs: 60_000 } })
  const ledger = await plannedLedger(name, app.id, Math.ceil(((RPM * 50) / 60) * (SECONDS + 30)))
  const cfg = writeConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    requestsPerMinute: RPM,
    ...(ledger.stateUrl !== undefined ? { stateUrl: ledger.stateUrl } : { stateDir: ledger.stateDir as string }),
  })
  const run = runCli(['load', '--config', cfg, '--job', name], {
    CHATFERRY_LOG_LEVEL: 'info',
    ...(name === 'observed' && !control ? { CHATFERRY_METRICS_PORT: '0' } : {}),
    ...(cpuProfDir !== undefined ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${join(cpuProfDir, name)}` } : {}),
  })
  let printed = ''
  run.child.stderr?.on('data', (d: Buffer) => (printed += d.toString()))
  run.child.stdout?.on('data', (d: Buffer) => (printed += d.toString()))
  await run.waitFor('loader started', 120_000)
  return { name, appId: app.id, run, cfg, printed: () => printed }
}

/** Scrapes the loader's metrics every 5 s and keeps a dashboard open on its job, its view read every second. */
async function watch(loader: Loader): Promise<{ stop(): Promise<string> }> {
  await loader.run.waitFor(/metrics at http:/, 180_000)
  const metricsUrl = /metrics at (http:\/\/[^\s"]+)/.exec(loader.printed())?.[1] ?? ''
  const dash = runCli(['dashboard', '--config', loader.cfg, '--job', loader.name, '--port', '0', '--refresh', '1'], { CHATFERRY_LOG_LEVEL: 'warn' })
  let dashPrinted = ''
  dash.child.stderr?.on('data', (d: Buffer) => (dashPrinted += d.toString()))
  await dash.waitFor(/dashboard of job \S+ at http:/, 180_000)
  const viewUrl = `${/at (http:\/\/\S+\/)/.exec(dashPrinted)?.[1] ?? ''}api/view`
  let scrapes = 0
  let views = 0
  const every = (ms: number, url: string, count: () => void) =>
    setInterval(
      () =>
        void fetch(url)
          .then((r) => r.text().then(count))
          .catch(() => {}),
      ms,
    )
  const scrape = every(5000, metricsUrl, () => scrapes++)
  const poll = every(1000, viewUrl, () => views++)
  return {
    async stop() {
      clearInterval(scrape)
      clearInterval(poll)
      dash.child.kill('SIGTERM')
      await dash.done
      return `${scrapes} scrapes, ${views} dashboard views`
    },
  }
}

/** Items the sandbox took for `appId` in the first `SECONDS` from its first request, ÷ what the quota allows. */
async function efficiency(sb: Sandbox, appId: string): Promise<{ ratio: number; r429: number }> {
  const log = (await sb.requests(appId)).filter((r) => r.endpoint === 'messages' || r.endpoint === 'users')
  const first = Math.min(...log.map((r) => r.receivedAtMs))
  const items = log.filter((r) => r.receivedAtMs < first + SECONDS * 1000 && r.status === 200).reduce((a, r) => a + (r.itemCount ?? 0), 0)
  return { ratio: items / (SECONDS / 60) / (RPM * 50), r429: log.filter((r) => r.status === 429).length }
}

async function round(sb: Sandbox, i: number): Promise<number> {
  const order: Loader['name'][] = i % 2 === 0 ? ['plain', 'observed'] : ['observed', 'plain']
  const loaders = await Promise.all(order.map((name) => startLoader(sb, name)))
  const plain = loaders.find((l) => l.name === 'plain') as Loader
  const observed = loaders.find((l) => l.name === 'observed') as Loader
  const watcher = control ? { stop: () => Promise.resolve('control: not watched') } : await watch(observed)
  const cpu0 = { plain: cpuSeconds(plain.run.child.pid as number), observed: cpuSeconds(observed.run.child.pid as number) }
  await new Promise((r) => setTimeout(r, SECONDS * 1000))
  const cpu = {
    plain: cpuSeconds(plain.run.child.pid as number) - cpu0.plain,
    observed: cpuSeconds(observed.run.child.pid as number) - cpu0.observed,
  }
  const watched = await watcher.stop()
  for (const l of loaders) {
    l.run.child.kill('SIGTERM')
    await l.run.done
  }
  await sb.whenIdle()
  const eff = { plain: await efficiency(sb, plain.appId), observed: await efficiency(sb, observed.appId) }
  const ratio = cpu.observed / cpu.plain
  console.log(
    `round ${i + 1} (${embedded ? 'embedded' : 'Postgres'} ledgers, ${SECONDS} s, started ${order.join(' then ')}): ` +
      `loader CPU plain ${cpu.plain.toFixed(2)} s · observed ${cpu.observed.toFixed(2)} s (${watched}) · ratio ${ratio.toFixed(3)} (target ≤ 1.05) · ` +
      `quota efficiency plain ${eff.plain.ratio.toFixed(3)}, observed ${eff.observed.ratio.toFixed(3)} (target ≥ 0.97) · 429s ${eff.plain.r429}/${eff.observed.r429}`,
  )
  return ratio
}

try {
  const sb = await startSandbox({ state: { url: await databases.fresh('bench_observe_sb') } })
  try {
    const ratios: number[] = []
    for (let i = 0; i < rounds; i++) {
      ratios.push(await round(sb, i))
    }
    const sorted = [...ratios].sort((a, b) => a - b)
    console.log(`observed ÷ plain loader CPU over ${rounds} round(s): median ${sorted[Math.floor(sorted.length / 2)]?.toFixed(3)} (target ≤ 1.05)`)
  } finally {
    await sb.close()
  }
} finally {
  await databases.dropAll()
}
