/**
 * The work queue on pg-boss 12: a ledger whose work queue pg-boss 10 created (chatferry's pg-boss
 * before issue 14) opens, migrates and keeps its jobs; and lease renewal (the ledger lease and the
 * pg-boss heartbeat, renewed together) keeps a batch held past its lease, while a batch that is not
 * renewed comes back. On Postgres and on the embedded PGlite store.
 */
import PgBoss10 from 'pg-boss-10'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  BOSS_SCHEMA,
  heartbeatSeconds,
  maxHoldSeconds,
  queueJobId,
  queueName,
  RETIRED_SCHEMA,
  startWorkQueue,
  type WorkQueue,
} from '../../src/load/work-queue.ts'
import { type LedgerStore, openLedger } from '../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { users } from '../helpers/ledger-fixtures.ts'
import { dropWithin } from '../helpers/loader-harness.ts'

let tdb: TestDatabase
const stores: { name: string; store?: LedgerStore; url?: string }[] = [{ name: 'postgres' }, { name: 'pglite' }]

beforeAll(async () => {
  tdb = await createTestDatabase('cf_boss')
  stores[0]!.store = await openLedger({ url: tdb.url })
  stores[0]!.url = tdb.url
  stores[1]!.store = await openLedger({ dir: 'memory://' })
})

afterAll(async () => {
  for (const s of stores) {
    await s.store?.close()
  }
  await dropWithin(tdb)
})

/** pg-boss 10 as chatferry ran it before: same schema, queue per job, a fixed expiry as the lease. */
function oldBoss(store: LedgerStore, url: string | undefined): PgBoss10 {
  const common = { schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: true }
  const embedded = store.sessions.embedded
  return embedded !== undefined
    ? new PgBoss10({ ...common, db: { executeSql: (text: string, values: unknown[] = []) => embedded.executeSql(text, values) } })
    : new PgBoss10({ ...common, connectionString: url as string, max: 2 })
}

describe.each(stores)('the work queue on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const open = (jobId: string, leaseSeconds: number) =>
    startWorkQueue(store().sessions, { jobId, leaseSeconds, ...(entry.url !== undefined ? { url: entry.url } : {}) })

  it('opens a ledger whose queue and jobs pg-boss 10 created: pg-boss 12 installs its schema, the unfinished jobs are adopted, the heartbeat is set', async () => {
    const jobId = `up-${entry.name}`
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(120))
    const name = queueName(jobId)
    const old = oldBoss(store(), entry.url)
    await old.start()
    await old.createQueue(name, { name, policy: 'standard', expireInSeconds: 30, retryLimit: 100_000, retryDelay: 1, retryBackoff: false })
    const batchIds: number[] = []
    await store().batches.pack(jobId, { depth: 3, itemsPerRequest: 50 }, async (trx, ids) => {
      batchIds.push(...ids)
      await old.insert(
        ids.map((batchId) => ({ id: queueJobId(batchId), name, data: { jobId, batchId } })),
        { db: { executeSql: (text: string, values: unknown[] = []) => trx.executeSql(text, values) } },
      )
    })
    expect(batchIds).toHaveLength(3)
    // One batch in flight when the old version stopped.
    const [active] = await old.fetch<{ batchId: number }>(name)
    expect(active?.data.batchId).toBe(batchIds[0])
    expect(await old.schemaVersion()).toBe(24)
    await old.stop({ graceful: false, close: true, wait: true, timeout: 2000 })

    // A second job's queue, whose loader has not started since: its jobs are adopted too.
    const other = queueName(`${jobId}-b`)
    const old2 = oldBoss(store(), entry.url)
    await old2.start()
    await old2.createQueue(other, { name: other, policy: 'standard', expireInSeconds: 30, retryLimit: 100_000 })
    await old2.insert([{ id: queueJobId(999_999), name: other, data: { jobId: `${jobId}-b`, batchId: 999_999 } }])
    await old2.stop({ graceful: false, close: true, wait: true, timeout: 2000 })

    const queue = await open(jobId, 20)
    try {
      expect(await queue.boss.schemaVersion()).toBeGreaterThan(24)
      const q = await queue.boss.getQueue(name)
      expect(q).toMatchObject({ heartbeatSeconds: heartbeatSeconds(20), expireInSeconds: maxHoldSeconds(20), retryLimit: 100_000 })
      // The unfinished jobs were adopted with their ids and data; the one in flight is offered again.
      const jobs = await queue.boss.fetch<{ jobId: string; batchId: number }>(name, { batchSize: 10 })
      expect(jobs.map((j) => j.data.batchId).sort()).toEqual([...batchIds].sort())
      expect(jobs.every((j) => j.id === queueJobId(j.data.batchId) && j.data.jobId === jobId)).toBe(true)
      expect(await store().batches.abandonOrphans(jobId, (trx, ids) => queue.withoutLiveJob(trx, ids))).toBe(0)
      const [adopted] = await queue.boss.findJobs<{ batchId: number }>(other, { id: queueJobId(999_999) })
      expect(adopted?.data.batchId).toBe(999_999)
      // The retired pg-boss 10 schema is gone once its jobs were copied.
      const gone = await store().sessions.withSession((s) => s.executeSql(`select to_regnamespace('${RETIRED_SCHEMA}') is null as gone`))
      expect(gone.rows[0]).toEqual({ gone: true })
      // New jobs get the heartbeat.
      await store().planItems(jobId, 'users', users(160).slice(120))
      const more: number[] = []
      await store().batches.pack(jobId, { depth: 10, itemsPerRequest: 50 }, async (trx, ids) => {
        more.push(...ids)
        await queue.enqueue(trx, ids)
      })
      const [fresh] = await queue.boss.findJobs(name, { id: queueJobId(more[0]!) })
      expect(fresh?.heartbeatSeconds).toBe(heartbeatSeconds(20))
    } finally {
      await queue.stop()
    }
  }, 60_000)

  it('a renewed lease outlives leaseSeconds; a lease not renewed comes back to the queue', async () => {
    const jobId = `renew-${entry.name}`
    const leaseSeconds = 10
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(100))
    let queue: WorkQueue | undefined
    try {
      queue = await open(jobId, leaseSeconds)
      const q = queue
      await store().batches.pack(jobId, { depth: 2, itemsPerRequest: 50 }, (trx, ids) => q.enqueue(trx, ids))
      const jobs = await q.boss.fetch<{ batchId: number }>(q.name, { batchSize: 2 })
      expect(jobs).toHaveLength(2)
      const claimed = await store().batches.claim({ jobId, batchIds: jobs.map((j) => j.data.batchId), owner: 'h/1/a', leaseSeconds })
      const [kept, dropped] = claimed
      const renew = () =>
        store().batches.renew([{ batchId: kept!.id, token: kept!.token }], leaseSeconds, (trx, ids) => q.touch(ids.map(queueJobId), trx))
      const deadline = Date.now() + (leaseSeconds + 6) * 1000
      while (Date.now() < deadline) {
        expect([...(await renew())]).toEqual([kept!.id])
        await new Promise((r) => setTimeout(r, 3000))
      }
      const state = async (batchId: number) => (await q.boss.findJobs(q.name, { id: queueJobId(batchId) }))[0]?.state
      // pg-boss's monitor pass fails the job whose heartbeat stopped (a retry, offered again).
      expect(await state(kept!.id)).toBe('active')
      expect(['retry', 'created']).toContain(await state(dropped!.id))
      const leased = (await store().batches.leased(jobId)).map((b) => b.id)
      expect(leased).toEqual([kept!.id])
      // A lapsed lease is not revived by a renewal.
      expect([...(await store().batches.renew([{ batchId: dropped!.id, token: dropped!.token }], leaseSeconds, async () => {}))]).toEqual([])
    } finally {
      await queue?.stop()
    }
  }, 60_000)
})
