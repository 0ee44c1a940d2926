/**
 * The generated Mattermost databases the connector and plan benchmarks share: `cf_bench_mm_<size>`
 * on the Postgres of `TEST_DATABASE_URL` (or the local one), kept between runs and rebuilt when
 * missing, half-generated, or when `regenerate` is asked for. (Not a benchmark itself: `run.ts`
 * only runs `*-bench.ts`.)
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { stringify } from 'yaml'

import { generateMattermost } from '../fixtures/mattermost/generate.ts'

export const BENCH_SERVER = process.env.TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

/** The URL of database `name` on the bench server. */
export function benchDbUrl(name: string): string {
  const u = new URL(BENCH_SERVER)
  u.pathname = `/${name}`
  return u.toString()
}

/** Runs `f` with a client connected to the bench server's maintenance database. */
export async function withBenchAdmin<T>(f: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: BENCH_SERVER })
  await c.connect()
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

/**
 * Database `name` on the bench server, kept when `isComplete` says its rows are all there (and no
 * `regenerate`), else dropped, created again and filled by `generate` (which prints its own line).
 */
export async function ensureBenchDb(
  name: string,
  regenerate: boolean,
  isComplete: (c: pg.Client) => Promise<boolean>,
  generate: (url: string) => Promise<void>,
): Promise<string> {
  const url = benchDbUrl(name)
  const exists = await withBenchAdmin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1)
  if (exists && !regenerate) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      if (await isComplete(c)) {
        return url
      }
    } catch {
      // half-generated: rebuild
    } finally {
      await c.end()
    }
  }
  await withBenchAdmin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${name}`)
  })
  await generate(url)
  return url
}

/** A generated Mattermost database with `size` live posts; returns its URL. */
export function ensureMattermostBenchDb(size: number, regenerate = false): Promise<string> {
  const name = `cf_bench_mm_${size}`
  return ensureBenchDb(
    name,
    regenerate,
    async (c) => (await c.query("SELECT count(*)::int AS n FROM posts WHERE originalid = ''")).rows[0]?.n === size,
    async (url) => {
      process.stdout.write(`generating ${size.toLocaleString('en')} posts into ${name}… `)
      const g = await generateMattermost({ engine: 'postgres', url, posts: size })
      const c = new pg.Client({ connectionString: url })
      await c.connect()
      await c.query('VACUUM ANALYZE')
      await c.end()
      process.stdout.write(`${(g.ms / 1000).toFixed(1)} s (${g.postRows.toLocaleString('en')} post rows)\n`)
    },
  )
}

/**
 * A benchmark job: its ledger database `stateName` created afresh, and its configuration file in a
 * new temporary folder (a target that is never called: benches plan, they do not load).
 */
export async function freshBenchJob(
  stateName: string,
  dirPrefix: string,
  job: { source: unknown; policies: unknown },
): Promise<{ dir: string; cfg: string }> {
  await withBenchAdmin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${stateName} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${stateName}`)
  })
  const dir = mkdtempSync(join(tmpdir(), `${dirPrefix}-`))
  const cfg = join(dir, 'chatferry.yaml')
  writeFileSync(
    cfg,
    stringify({
      target: { appId: 'bench', region: 'us', apiKey: 'bench-key-not-used', baseUrl: 'http://127.0.0.1:9/apps/bench/v3' },
      state: { url: benchDbUrl(stateName) },
      source: job.source,
      policies: job.policies,
    }),
  )
  return { dir, cfg }
}
