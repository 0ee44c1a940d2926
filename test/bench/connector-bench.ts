/**
 * Connector benchmark: a generated Mattermost database on Postgres, read two ways in the same run:
 * - raw: `COPY (<the connector's own message SELECT, unpaged>) TO STDOUT` through the same `pg`
 *   driver (bytes counted, nothing parsed): the ceiling for reading these rows;
 * - chatferry: the Mattermost connector's keyset pages → canonical records → `mapMessage` (zod-
 *   validated import items; falls back to a canonical check when mappings/ is absent).
 * Prints rows/s for both, how busy this process was during its read (near 100%: bound by our CPU,
 * not the server), their ratio (target ≥ 0.5) and the peak RSS of each size (target: flat
 * within 50 MB between 100k and 1M). Each size runs in its own child process, so peaks don't mix.
 *
 *   node test/bench/connector-bench.ts [--sizes 100000,1000000] [--page-size 5000] [--quick] [--live-heap]
 *   npm run bench -- connector
 *
 * Generated databases are kept (`cf_bench_mm_<size>`) and reused by later runs; `--regenerate`
 * rebuilds them. The Postgres server is `TEST_DATABASE_URL` or postgres://postgres@127.0.0.1:5432/postgres.
 */
import { spawnSync } from 'node:child_process'
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'

import { createConnector, SourceConfigSchema } from '../../connectors/index.ts'
import { messagesQuery } from '../../connectors/mattermost/sql/queries.ts'
import { DIALECTS } from '../../connectors/sql/dialect.ts'
import type { LegacyMessage } from '../../src/model/records.ts'
import { benchDbUrl as dbUrl, ensureMattermostBenchDb } from './mattermost-bench-db.ts'

const args = process.argv.slice(2)
const flag = (name: string) => args.includes(`--${name}`)
const value = (name: string) => {
  const i = args.indexOf(`--${name}`)
  return i === -1 ? undefined : args[i + 1]
}
const pageSize = Number(value('page-size') ?? 5000)

/** Reads the connector's message SELECT (unpaged, key order) with COPY; counts rows and bytes. */
async function rawCopy(url: string): Promise<{ rows: number; bytes: number; ms: number }> {
  const q = messagesQuery(DIALECTS.postgres)
  const sql = `COPY (SELECT ${q.select} FROM ${q.from} WHERE ${q.where.join(' AND ')} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}) TO STDOUT`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const started = performance.now()
  let rows = 0
  let bytes = 0
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    await pipeline(
      client.query(copyTo(sql)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            rows++
          }
          done()
        },
      }),
    )
    await client.query('COMMIT')
  } finally {
    await client.end()
  }
  return { rows, bytes, ms: performance.now() - started }
}

type Check = (m: LegacyMessage) => boolean

async function mapper(): Promise<{ name: string; check: Check }> {
  try {
    const m = await import('../../mappings/index.ts')
    const ctx = {
      ...m.createMappingContext({ now: Date.UTC(2024, 6, 1), policies: { retention: { retentionDays: 100_000 } } as never }),
      user: (id: string) => ({ uid: id, name: id }),
      group: (id: string) => ({ guid: id, name: id, type: 'public' as const }),
      message: (id: string) => ({ muid: id }),
    }
    return { name: 'extract + mapMessage (zod-validated)', check: (rec) => m.mapMessage(rec, ctx as never).kind !== undefined }
  } catch (err) {
    process.stderr.write(`mappings/ unavailable (${(err as Error).message}); validating canonical records only\n`)
    return {
      name: 'extract + canonical check',
      check: (rec) => typeof rec.id === 'string' && Number.isFinite(rec.sentAt) && (rec.receiverType === 'user' || rec.receiverType === 'group'),
    }
  }
}

async function extract(url: string, check: Check): Promise<{ rows: number; problems: number; ms: number; busy: number; liveHeapMb?: number }> {
  const source = createConnector(SourceConfigSchema.parse({ connector: 'mattermost', url, pageSize }))
  const started = performance.now()
  // How much of the read this process spent working rather than waiting for the database: near 1,
  // the read is bound by our CPU (parse, decode, map, validate), not by the server.
  const elu = performance.eventLoopUtilization()
  const session = await source.open()
  let rows = 0
  let problems = 0
  let pages = 0
  // --live-heap: the heap still in use after a full collection, every 20 pages. It tells memory
  // that is retained (grows with the table) from garbage V8 has not collected yet (peak RSS).
  const gc = flag('live-heap') ? (globalThis as { gc?: () => void }).gc : undefined
  let liveHeap = 0
  try {
    for await (const page of session.read('messages')) {
      for (const r of page.rows) {
        rows++
        if (!r.ok || !check(r.record)) {
          problems++
        }
      }
      if (gc && ++pages % 20 === 0) {
        gc()
        liveHeap = Math.max(liveHeap, process.memoryUsage().heapUsed)
      }
    }
  } finally {
    await session.close()
  }
  const busy = performance.eventLoopUtilization(elu).utilization
  return { rows, problems, ms: performance.now() - started, busy, ...(gc ? { liveHeapMb: liveHeap / 2 ** 20 } : {}) }
}

async function child(size: number): Promise<void> {
  const url = dbUrl(`cf_bench_mm_${size}`)
  const { name, check } = flag('no-map') ? { name: 'extract only', check: () => true } : await mapper()
  // chatferry's read runs first, so the peak RSS it reports is its own (the raw COPY comes after).
  await rawCopy(url) // warm the database cache
  const baseRssMb = process.resourceUsage().maxRSS / 1024
  const ours = await extract(url, check)
  const peakRssMb = process.resourceUsage().maxRSS / 1024
  const raw = await rawCopy(url)
  process.stdout.write(`${JSON.stringify({ size, name, raw, ours, peakRssMb, baseRssMb })}\n`)
}

async function main(): Promise<void> {
  if (flag('child')) {
    return child(Number(value('child')))
  }
  const sizes = (value('sizes') ?? (flag('quick') ? '20000' : '100000,1000000')).split(',').map(Number)
  const results: {
    size: number
    name: string
    raw: { rows: number; ms: number; bytes: number }
    ours: { rows: number; problems: number; ms: number; busy: number; liveHeapMb?: number }
    peakRssMb: number
    baseRssMb: number
  }[] = []
  for (const size of sizes) {
    await ensureMattermostBenchDb(size, flag('regenerate'))
    const r = spawnSync(
      process.execPath,
      [
        ...(flag('live-heap') ? ['--expose-gc'] : []),
        import.meta.filename,
        '--child',
        String(size),
        '--page-size',
        String(pageSize),
        ...(flag('no-map') ? ['--no-map'] : []),
        ...(flag('live-heap') ? ['--live-heap'] : []),
      ],
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    )
    if (r.status !== 0) {
      throw new Error(`bench child for ${size} failed: ${r.stdout}`)
    }
    results.push(JSON.parse(r.stdout.trim().split('\n').pop() as string))
  }
  const fmt = (n: number) => Math.round(n).toLocaleString('en')
  process.stdout.write(`\nMattermost messages on Postgres, page size ${pageSize}\n`)
  for (const r of results) {
    const rawRate = (r.raw.rows / r.raw.ms) * 1000
    const ourRate = (r.ours.rows / r.ours.ms) * 1000
    process.stdout.write(
      `${fmt(r.size)} posts: raw COPY ${fmt(r.raw.rows)} rows in ${(r.raw.ms / 1000).toFixed(2)} s = ${fmt(rawRate)} rows/s (${(r.raw.bytes / 2 ** 20).toFixed(0)} MiB)` +
        ` | ${r.name}: ${fmt(r.ours.rows)} rows (${r.ours.problems} problems) in ${(r.ours.ms / 1000).toFixed(2)} s = ${fmt(ourRate)} rows/s, ${Math.round(r.ours.busy * 100)}% busy` +
        ` | ratio ${(ourRate / rawRate).toFixed(2)} (target ≥ 0.50) | peak RSS ${r.peakRssMb.toFixed(0)} MB (${r.baseRssMb.toFixed(0)} MB before the read)` +
        `${r.ours.liveHeapMb !== undefined ? ` | live heap after GC ≤ ${r.ours.liveHeapMb.toFixed(0)} MB (rates include the GCs)` : ''}\n`,
    )
  }
  if (results.length > 1) {
    const peaks = results.map((r) => r.peakRssMb)
    const spread = Math.max(...peaks) - Math.min(...peaks)
    process.stdout.write(`peak RSS spread across sizes: ${spread.toFixed(0)} MB (target ≤ 50 MB)\n`)
  }
}

await main()
