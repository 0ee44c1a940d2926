/**
 * A stop during load (SIGINT/SIGTERM reach the loader as its `signal`): no new request starts, the
 * requests in flight are awaited and their answers settled in the ledger, and the loader returns
 * `stopped`. Nothing the platform committed is left unsettled.
 */
import { sql } from 'kysely'
import { pino } from 'pino'
import { expect, it } from 'vitest'

import { resolveLoadConfig } from '../../../src/load/config.ts'
import { runLoader } from '../../../src/load/loader.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { createPlatformClient, type PlatformClient } from '../../../src/target/client.ts'
import { users } from '../../helpers/ledger-fixtures.ts'
import { sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_stop')

it('aborted mid-flight against a slow platform: the requests in flight complete and their items end done', async () => {
  const app = await fx.sb.createApp({
    id: 'slow',
    settings: { requestsPerMinute: 1000, windowMs: 10_000, faults: { latencyMs: { min: 1500, max: 1500 } } },
  })
  await fx.store.ensureJob('slow', app.id)
  await fx.store.planItems('slow', 'users', users(600))

  // The real client over HTTP; the test only notes when a request goes out.
  const real = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey, timeoutMs: 5000 })
  let started = 0
  let firstSent: () => void = () => {}
  const sent = new Promise<void>((resolve) => (firstSent = resolve))
  const client: PlatformClient = {
    ...real,
    importRaw: (...args) => {
      started++
      firstSent()
      return real.importRaw(...args)
    },
  }
  const stop = new AbortController()
  const loading = runLoader({
    store: fx.store,
    jobId: 'slow',
    appId: app.id,
    client,
    itemsPerRequest: 50,
    requestsPerMinute: 6000,
    timeoutMs: 5000,
    settings: resolveLoadConfig({ leaseSeconds: 10, concurrency: 4, quotaWindowMs: 10_000 }, {}, {}),
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    mode: 'load',
    signal: stop.signal,
  })
  await sent
  // Let the other lanes send too, then stop while every request is still waiting for its answer.
  await new Promise((r) => setTimeout(r, 300))
  stop.abort()
  const out = await loading

  expect(out.status).toBe('stopped')
  expect(out.error).toBeUndefined()
  expect(started).toBeGreaterThan(0)
  expect(started).toBeLessThan(12)
  // Every request that went out was answered by the sandbox and committed there …
  const log = await fx.sb.requests(app.id)
  expect(log).toHaveLength(started)
  const inSandbox = await sandboxKeys(fx.sb, app.id, 'users')
  expect(inSandbox.size).toBe(started * 50)
  // … and the ledger says done for exactly those items: nothing released as STOPPED that was committed.
  const rows = await sql<{ target_key: string; status: string }>`
    select target_key, status from chatferry.items where job_id = 'slow' and entity = 'users'`.execute(inspectLedger(fx.store))
  const done = rows.rows.filter((r) => r.status === 'done').map((r) => r.target_key)
  expect(done.sort()).toEqual([...inSandbox.keys()].sort())
  expect(rows.rows.filter((r) => r.status === 'rejected')).toEqual([])
  expect(out.counters.itemsDone).toBe(started * 50)

  // The rest is still there to load: the next run finishes the job.
  const rest = await runLoader({
    store: fx.store,
    jobId: 'slow',
    appId: app.id,
    client: real,
    itemsPerRequest: 50,
    requestsPerMinute: 6000,
    timeoutMs: 5000,
    settings: resolveLoadConfig({ leaseSeconds: 10, concurrency: 4, quotaWindowMs: 10_000 }, {}, {}),
    logger: pino({ level: 'silent' }),
    mode: 'load',
  })
  expect(rest.status).toBe('done')
  expect((await sandboxKeys(fx.sb, app.id, 'users')).size).toBe(600)
}, 90_000)
