/**
 * Plan benchmark: `chatferry plan` (the dry run, classified against a Postgres ledger, with the
 * report in JSON and HTML) on a generated Mattermost database, against extraction + mapping alone
 * (the same planning loop with a sink that does nothing: no ledger, thread parents only from the
 * page in hand). Prints wall time, rows/s and peak RSS of each, and their ratio (target: plan in
 * under 2× extraction + mapping; RSS flat between 100k and 1M). Each run is its own child process,
 * so peaks don't mix.
 *
 *   node test/bench/plan-bench.ts [--sizes 100000,1000000] [--page-size 1000] [--v8-defaults] [--v8-flag F] [--quick]
 *   npm run bench -- plan
 *
 * Generated databases (`cf_bench_mm_<size>`) are shared with the connector benchmark and reused;
 * `--regenerate` rebuilds them. The Postgres server is `TEST_DATABASE_URL` or
 * postgres://postgres@127.0.0.1:5432/postgres.
 */
import { spawnSync } from 'node:child_process'
import { rmSync } from 'node:fs'

import { createConnector, SourceConfigSchema } from '../../connectors/index.ts'
import { PoliciesSchema } from '../../mappings/index.ts'
import { openCommandContext } from '../../src/cli/open-command-context.ts'
import { runPlan } from '../../src/job/run-plan.ts'
import { DEFAULT_PAGE_SIZE, planJob, type PlanSink } from '../../src/plan/plan-job.ts'
import { emptyCounts } from '../../src/state/index.ts'
import { childNodeFlags, childV8Args, setChildRuntimeV8Flags } from './child-v8-flags.ts'
import { benchDbUrl as dbUrl, ensureMattermostBenchDb, freshBenchJob, withBenchAdmin as admin } from './mattermost-bench-db.ts'

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
// chatferry's own default (src/plan/plan-run.ts, connectors/sql/paged-read.ts): the product as it runs.
const pageSize = Number(value('page-size') ?? DEFAULT_PAGE_SIZE)
/** The children's V8 flags: chatferry's (child-v8-flags.ts). */
const v8Flags = childNodeFlags(args)
/** The generator's posts span recent years: keep every message (as an app with extended retention would). */
const POLICIES = { retention: { retentionDays: 100_000 } }

/** Extraction + mapping + validation alone: the planning loop with a sink that keeps nothing. */
async function extractMap(url: string): Promise<{ rows: number; items: number }> {
  const session = await createConnector(SourceConfigSchema.parse({ connector: 'mattermost', url, pageSize })).open()
  const sink: PlanSink = {
    resumable: false,
    loadIds: async () => [],
    saveIds: async (ids) => void ids.takeNew(),
    loadUsers: async () => new Map(),
    loadGroups: async () => new Map(),
    parents: async () => new Map(),
    getCursor: async () => undefined,
    writeExtras: async () => emptyCounts(),
    writePage: async () => emptyCounts(),
    finishEntity: async () => {},
  }
  try {
    const s = await planJob({
      jobId: 'bench',
      store: undefined as never,
      session,
      policies: PoliciesSchema.parse(POLICIES),
      now: Date.now(),
      pageSize,
      sink,
    })
    const rows = Object.values(s.entities).reduce((a, e) => a + e.sourceRows, 0)
    const items = Object.values(s.entities).reduce((a, e) => a + e.items, 0)
    return { rows, items }
  } finally {
    await session.close()
  }
}

async function plan(url: string, size: number): Promise<{ rows: number; items: number }> {
  const stateName = `cf_bench_plan_state_${size}`
  const { dir, cfg } = await freshBenchJob(stateName, 'chatferry-plan-bench', {
    source: { connector: 'mattermost', url, pageSize },
    policies: POLICIES,
  })
  const ctx = await openCommandContext({ config: cfg })
  try {
    const r = await runPlan(ctx, { outDir: dir })
    const rows = Object.values(r.report.entities).reduce((a, e) => a + e.sourceRows, 0)
    const items = Object.values(r.report.entities).reduce((a, e) => a + e.items, 0)
    return { rows, items }
  } finally {
    await ctx.close()
    rmSync(dir, { recursive: true, force: true })
    await admin((c) => c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`))
  }
}

async function child(mode: 'extract-map' | 'plan', size: number): Promise<void> {
  setChildRuntimeV8Flags(args)
  const url = dbUrl(`cf_bench_mm_${size}`)
  const baseRssMb = process.resourceUsage().maxRSS / 1024
  const started = performance.now()
  const r = mode === 'plan' ? await plan(url, size) : await extractMap(url)
  const ms = performance.now() - started
  const peakRssMb = process.resourceUsage().maxRSS / 1024
  process.stdout.write(`${JSON.stringify({ mode, size, ...r, ms, peakRssMb, baseRssMb })}\n`)
}

interface Result {
  mode: string
  size: number
  rows: number
  items: number
  ms: number
  peakRssMb: number
  baseRssMb: number
}

async function main(): Promise<void> {
  if (flag('child')) {
    return child(value('mode') as 'extract-map' | 'plan', Number(value('child')))
  }
  const sizes = (value('sizes') ?? (flag('quick') ? '20000' : '100000,1000000')).split(',').map(Number)
  const results: Result[] = []
  for (const size of sizes) {
    await ensureMattermostBenchDb(size, flag('regenerate'))
    for (const mode of ['extract-map', 'plan'] as const) {
      const r = spawnSync(
        process.execPath,
        [...v8Flags, import.meta.filename, '--child', String(size), '--mode', mode, '--page-size', String(pageSize), ...childV8Args(args)],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
        },
      )
      if (r.status !== 0) {
        throw new Error(`bench child ${mode} ${size} failed: ${r.stdout}`)
      }
      results.push(JSON.parse(r.stdout.trim().split('\n').pop() as string) as Result)
    }
  }
  const fmt = (n: number) => Math.round(n).toLocaleString('en')
  process.stdout.write(`\nchatferry plan on a generated Mattermost database (Postgres source and ledger), page size ${pageSize}\n`)
  for (const size of sizes) {
    const base = results.find((r) => r.size === size && r.mode === 'extract-map')
    const full = results.find((r) => r.size === size && r.mode === 'plan')
    if (!base || !full) {
      continue
    }
    for (const r of [base, full]) {
      process.stdout.write(
        `${fmt(size)} posts · ${r.mode.padEnd(11)}: ${fmt(r.rows)} rows → ${fmt(r.items)} items in ${(r.ms / 1000).toFixed(2)} s = ${fmt((r.rows / r.ms) * 1000)} rows/s, peak RSS ${r.peakRssMb.toFixed(0)} MB\n`,
      )
    }
    process.stdout.write(`${fmt(size)} posts · plan / (extract + map) = ${(full.ms / base.ms).toFixed(2)}× (target < 2.00×)\n`)
  }
  for (const mode of ['extract-map', 'plan']) {
    const peaks = results.filter((r) => r.mode === mode).map((r) => r.peakRssMb)
    if (peaks.length > 1) {
      process.stdout.write(`${mode}: peak RSS spread across sizes ${(Math.max(...peaks) - Math.min(...peaks)).toFixed(0)} MB\n`)
    }
  }
}

await main()
