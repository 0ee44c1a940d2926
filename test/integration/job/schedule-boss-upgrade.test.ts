/**
 * A ledger from before the ledger lease (issue 25): pg-boss 10 held a job per batch in
 * `chatferry-load-<job>`. Its open batches are claimed from the ledger as they are (no pg-boss job
 * is read), and pg-boss for schedules moves pg-boss 10's schema aside and installs its own
 * (src/job/schedule-boss.ts). On Postgres (schedules need a server).
 */
import PgBoss10 from 'pg-boss-10'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { BOSS_SCHEMA, deleteBossQueues, legacyLoadQueueName, RETIRED_SCHEMA, startScheduleBoss } from '../../../src/job/schedule-boss.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { users } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'

let tdb: TestDatabase
let store: LedgerStore

beforeAll(async () => {
  tdb = await createTestDatabase('cf_boss')
  store = await openLedger({ url: tdb.url })
})

afterAll(async () => {
  await store?.close()
  await dropWithin(tdb)
})

it('an old ledger: its open batches are claimed from the ledger, and schedules move pg-boss 10 aside', async () => {
  const jobId = 'old'
  await store.ensureJob(jobId, 'app')
  await store.planItems(jobId, 'users', users(120))
  await store.batches.pack(jobId, { depth: 3, itemsPerRequest: 50 })
  const name = legacyLoadQueueName(jobId)
  const old = new PgBoss10({ schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: true, connectionString: tdb.url, max: 2 })
  await old.start()
  await old.createQueue(name, { name, policy: 'standard', expireInSeconds: 30, retryLimit: 100_000 })
  await old.insert([{ name, data: { jobId, batchId: 1 } }])
  expect(await old.schemaVersion()).toBe(24)
  await old.stop({ graceful: false, close: true, wait: true, timeout: 2000 })

  const claimed = await store.batches.claim({ jobId, owner: 'h/1/a', leaseSeconds: 60, limit: 10 })
  expect(claimed.map((b) => b.items.length)).toEqual([50, 50, 20])

  const boss = await startScheduleBoss(store.sessions, { url: tdb.url, cron: false, queues: [] })
  try {
    expect(await boss.schemaVersion()).toBeGreaterThan(24)
    const moved = await store.sessions.withSession((s) => s.executeSql(`select to_regclass('${RETIRED_SCHEMA}.job') is not null as moved`))
    expect(moved.rows[0]).toEqual({ moved: true })
    await boss.createQueue('chatferry-schedule-old', { policy: 'singleton' })
    await boss.send('chatferry-schedule-old', { jobId })
  } finally {
    await boss.stop({ graceful: false, close: true, timeout: 2000 })
  }
  // purge's deletion goes through pg-boss's API: the schedule queue and its job go.
  expect(await deleteBossQueues(store.sessions, [name, 'chatferry-schedule-old'], tdb.url)).toEqual(['chatferry-schedule-old'])
}, 60_000)
