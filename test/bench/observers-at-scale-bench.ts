/**
 * Observers of a large job (issue 25: the dashboard and the metrics must not cost the migration):
 * a job of `--items` planned messages (default 1M) in a Postgres ledger, watched for `--seconds`
 * (default 60) by the dashboard's sampler at `--refresh 2` and, apart, by a Prometheus scrape of the
 * job's metrics registry every 5 s: the readings each took, and the share of the window they kept
 * a ledger connection busy. Paced (src/paced-reading.ts) that share tends to 1 part in 20 once the
 * window holds several gaps (a reading of 3.5 s, then the next 70 s later: over 60 s, one reading is
 * 6% of the window). `--baseline DIR`
 * (another checkout, e.g. `git worktree add /tmp/base <commit>`) watches the same ledger with that
 * checkout's sampler and registry first: a before/after in one run.
 *
 *   npm run bench -- observers-at-scale [--items 1000000] [--seconds 60] [--baseline DIR]
 */
import { resolve } from 'node:path'

import { openLedger } from '../../src/state/store.ts'
import { messages, users } from '../helpers/ledger-fixtures.ts'
import { benchDatabases } from './bench-databases.ts'

const args = process.argv.slice(2)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const ITEMS = Number(value('items') ?? 1_000_000)
const SECONDS = Number(value('seconds') ?? 60)
const baseline = value('baseline')
const JOB = 'observed'

const config = {
  target: { appId: JOB, quota: { requestsPerMinute: 60, itemsPerRequest: 50 }, chatQuota: { requestsPerMinute: 1000 } },
  policies: { retention: { retentionDays: 365, oldMessages: 'skip' } },
}

interface Tally {
  readings: number
  busyMs: number
}

/** Wraps a reading so that its calls and the time they took are counted. */
function counted<A extends unknown[], T>(tally: Tally, read: (...a: A) => Promise<T>): (...a: A) => Promise<T> {
  return async (...a) => {
    tally.readings++
    const t = performance.now()
    try {
      return await read(...a)
    } finally {
      tally.busyMs += performance.now() - t
    }
  }
}

const line = (who: string, what: string, t: Tally) =>
  `${who} ${what}: ${t.readings} readings in ${SECONDS} s, ${(t.busyMs / Math.max(1, t.readings) / 1000).toFixed(2)} s each; ` +
  `a ledger connection busy ${(t.busyMs / 1000).toFixed(1)} s = ${((t.busyMs / 1000 / SECONDS) * 100).toFixed(1)}% of the window`

async function dashboard(root: string, url: string): Promise<Tally> {
  const { openLedgerSource } = (await import(
    `${root}/src/cli/dashboard/ledger-source.ts`
  )) as typeof import('../../src/cli/dashboard/ledger-source.ts')
  const { startSampler } = (await import(`${root}/src/cli/dashboard/sampler.ts`)) as typeof import('../../src/cli/dashboard/sampler.ts')
  const source = await openLedgerSource({ ...config, state: { url } } as never, '/dev/null', JOB)
  const tally = { readings: 0, busyMs: 0 }
  const sampler = startSampler({ read: counted(tally, source.read), close: source.close }, JOB, config as never, 2000)
  try {
    await sampler.refresh()
    await new Promise((r) => setTimeout(r, SECONDS * 1000))
  } finally {
    sampler.stop()
    await source.close()
  }
  process.stdout.write(`  (the page said: ${sampler.current()?.via})\n`)
  return tally
}

async function scrapes(root: string, url: string): Promise<Tally> {
  const { createLoaderMetrics } = (await import(`${root}/src/load/metrics.ts`)) as typeof import('../../src/load/metrics.ts')
  const { readJobMetrics } = (await import(`${root}/src/load/metrics-reading.ts`)) as typeof import('../../src/load/metrics-reading.ts')
  const store = await openLedger({ url, poolSize: 2 })
  const tally = { readings: 0, busyMs: 0 }
  const metrics = createLoaderMetrics({ jobId: JOB, appId: JOB, quota: config.target.quota, read: counted(tally, () => readJobMetrics(store, JOB)) })
  try {
    const end = Date.now() + SECONDS * 1000
    while (Date.now() < end) {
      const started = Date.now()
      await metrics.registry.metrics()
      await new Promise((r) => setTimeout(r, Math.max(0, 5000 - (Date.now() - started))))
    }
  } finally {
    metrics.close()
    await store.close()
  }
  return tally
}

async function main(): Promise<void> {
  const dbs = benchDatabases()
  try {
    const url = await dbs.fresh('cf_bench_observers')
    const store = await openLedger({ url })
    const started = performance.now()
    await store.ensureJob(JOB, JOB)
    await store.planItems(JOB, 'users', users(100))
    for (let i = 0; i < ITEMS; i += 10_000) {
      await store.planItems(JOB, 'messages', messages(Math.min(10_000, ITEMS - i), 100, `m${i}_`))
    }
    await store.close()
    process.stdout.write(`${ITEMS.toLocaleString('en-US')} messages planned in ${((performance.now() - started) / 1000).toFixed(0)} s\n`)
    const sides: [string, string][] = [
      ...(baseline !== undefined ? [['baseline', resolve(baseline)] as [string, string]] : []),
      ['this checkout', resolve(import.meta.dirname, '../..')],
    ]
    for (const [who, root] of sides) {
      process.stdout.write(`${line(who, 'dashboard at --refresh 2', await dashboard(root, url))}\n`)
      process.stdout.write(`${line(who, 'metrics scraped every 5 s', await scrapes(root, url))}\n`)
    }
  } finally {
    await dbs.dropAll()
  }
}

await main()
