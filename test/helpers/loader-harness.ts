/**
 * Runs the loader in-process against a sandbox app with the ledger on a fresh Postgres database
 * (the sandbox on a second one: on the embedded PGlite its every request cost the test process
 * CPU it needs for the loader).
 */
import { pino } from 'pino'
import { afterAll, beforeAll } from 'vitest'

import { type LoadConfig, resolveLoadConfig } from '../../src/load/config.ts'
import { type LoaderOptions, type LoadOutcome, runLoader } from '../../src/load/loader.ts'
import type { Sandbox } from '../../src/sandbox/index.ts'
import { type LedgerStore, openLedger } from '../../src/state/store.ts'
import { createPlatformClient } from '../../src/target/client.ts'
import type { Entity } from '../../src/target/schemas.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { startTestSandbox, type TestSandbox } from './sandbox.ts'

export interface HarnessOptions {
  store: LedgerStore
  stateUrl?: string
  jobId: string
  appId: string
  baseUrl: string
  apiKey: string
  requestsPerMinute: number
  settings?: Partial<LoadConfig>
  timeoutMs?: number
  signal?: AbortSignal
  mode?: 'load' | 'worker'
  retention?: LoaderOptions['retention']
  now?: () => number
}

export function loadOnce(o: HarnessOptions): Promise<LoadOutcome> {
  const timeoutMs = o.timeoutMs ?? 3000
  return runLoader({
    store: o.store,
    ...(o.stateUrl !== undefined ? { stateUrl: o.stateUrl } : {}),
    jobId: o.jobId,
    appId: o.appId,
    client: createPlatformClient({ baseUrl: o.baseUrl, apiKey: o.apiKey, timeoutMs }),
    itemsPerRequest: 50,
    requestsPerMinute: o.requestsPerMinute,
    timeoutMs,
    settings: resolveLoadConfig({ leaseSeconds: 10, ...o.settings }, {}, {}),
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    mode: o.mode ?? 'load',
    ...(o.signal ? { signal: o.signal } : {}),
    ...(o.retention ? { retention: o.retention } : {}),
    ...(o.now ? { now: o.now } : {}),
  })
}

const KEY_COLUMN: Record<Entity, string> = { users: 'uid', groups: 'guid', members: "guid || '_member_' || uid", messages: 'muid' }

/** Every key the sandbox holds for an entity of an app, with how many times. */
export async function sandboxKeys(sb: Sandbox, appId: string, entity: Entity): Promise<Map<string, number>> {
  const { sql } = await import('kysely')
  const r = await sql<{ k: string; n: number }>`
    select ${sql.raw(KEY_COLUMN[entity])} as k, count(*)::int as n from ${sql.table(`sandbox.${entity}`)} where app_id = ${appId} group by 1`.execute(
    sb.store,
  )
  return new Map(r.rows.map((row) => [row.k, Number(row.n)]))
}

/** The largest number of requests in any window of `windowMs` (sliding, by arrival). */
export function maxInWindow(arrivals: readonly number[], windowMs: number): number {
  const t = [...arrivals].sort((a, b) => a - b)
  let best = 0
  let lo = 0
  for (let hi = 0; hi < t.length; hi++) {
    while ((t[hi] as number) - (t[lo] as number) >= windowMs) {
      lo++
    }
    best = Math.max(best, hi - lo + 1)
  }
  return best
}

/**
 * Drops a test database, but gives up after `ms`: a DROP DATABASE waits for every backend on the
 * server to absorb a barrier, and one stuck session elsewhere (e.g. an abandoned COPY) would
 * otherwise hang the hook. The database is left behind in that case.
 */
export async function dropWithin(db: { drop(): Promise<void> } | undefined, ms = 10_000): Promise<void> {
  if (db === undefined) {
    return
  }
  await Promise.race([db.drop().catch(() => {}), new Promise((r) => setTimeout(r, ms).unref())])
}

/** What a loader test file works against: a fresh ledger database, its store and a sandbox on a database of its own. */
export interface LoaderFixture {
  sb: Sandbox
  tdb: TestDatabase
  store: LedgerStore
}

/**
 * Registers the file's `beforeAll`/`afterAll`: a fresh database named after `prefix` with the ledger
 * opened on it, and a sandbox; closed and dropped afterwards. The fields are set once `beforeAll` ran.
 */
export function useLoaderFixture(prefix: string): LoaderFixture {
  const fx = {} as LoaderFixture
  let tsb: TestSandbox | undefined
  beforeAll(async () => {
    fx.tdb = await createTestDatabase(prefix)
    fx.store = await openLedger({ url: fx.tdb.url })
    tsb = await startTestSandbox()
    fx.sb = tsb.sandbox
  })
  afterAll(async () => {
    await fx.store?.close()
    await tsb?.close()
    await dropWithin(fx.tdb)
  })
  return fx
}
