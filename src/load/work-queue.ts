/**
 * Load work as pg-boss jobs: one pg-boss job per ledger batch, in a queue per ledger job, in the
 * ledger's own database (schema `chatferry_boss`). pg-boss gives the lease (`expireInSeconds`),
 * the takeover of a dead worker's batch (expiry → retry), and fetching with SKIP LOCKED across
 * processes and machines. On the embedded PGlite store it runs through a `db` adapter.
 *
 * This is the one module that touches pg-boss's tables other than through pg-boss's API, in two
 * places only, because pg-boss has no API for either:
 * - {@link WorkQueue.withoutLiveJob}: which ledger batches have no live job (the orphan repair of
 *   `src/state/batch-ledger.ts` asks it, inside its transaction): pg-boss can look jobs up one by
 *   one, not check a set of ids against a state in one statement;
 * - the advisory lock around pg-boss's setup in {@link startWorkQueue} (see there).
 * Ledger transactions reach pg-boss as opaque handles ({@link LedgerTransaction}) that
 * {@link WorkQueue.adapter} turns into pg-boss's `db` option.
 */
import PgBoss from 'pg-boss'

import type { LedgerSessions } from '../state/ledger-sessions.ts'
import type { LedgerTransaction } from '../state/ledger-transaction.ts'

/** The Postgres schema pg-boss keeps its tables in. */
export const BOSS_SCHEMA = 'chatferry_boss'

/** The data of one load job: which ledger batch to send. */
export interface BatchJobData {
  readonly jobId: string
  readonly batchId: number
}

export interface WorkQueue {
  readonly boss: PgBoss
  /** The pg-boss queue of this ledger job. */
  readonly name: string
  /** A pg-boss `db` that runs inside a ledger transaction (so ledger writes and job changes commit together). */
  adapter(trx: LedgerTransaction): PgBoss.Db
  /** Completes several jobs in one statement, inside `trx`. */
  completeMany(ids: readonly string[], trx: LedgerTransaction): Promise<void>
  /** Inserts one job per ledger batch, inside `trx` (the transaction that created the batches). */
  enqueue(trx: LedgerTransaction, batchIds: readonly number[]): Promise<void>
  /** Of these ledger batches, those whose job is gone or finished for good (not created, retry or active). */
  withoutLiveJob(trx: LedgerTransaction, batchIds: readonly number[]): Promise<number[]>
  stop(): Promise<void>
}

/** The pg-boss job id of a ledger batch: deterministic, so inserting it twice is a no-op, and ordered like the batches. */
export function queueJobId(batchId: number): string {
  const hex = batchId.toString(16).padStart(12, '0')
  return `00000000-0000-4000-8000-${hex}`
}

/** The queue name of a ledger job. */
export function queueName(jobId: string): string {
  return `chatferry-load-${jobId}`
}

function transactionAdapter(trx: LedgerTransaction): PgBoss.Db {
  return { executeSql: (text: string, values: unknown[] = []) => trx.executeSql(text, values) }
}

/** The pg-boss job id of every batch, computed in SQL as {@link queueJobId} does; 'completed' and later states are final. */
const WITHOUT_LIVE_JOB = `
  select b.id from unnest($2::bigint[]) as b(id)
  where not exists (select 1 from ${BOSS_SCHEMA}.job j where j.name = $1
                    and j.id = ('00000000-0000-4000-8000-' || lpad(to_hex(b.id), 12, '0'))::uuid
                    and j.state < 'completed')`

export interface WorkQueueOptions {
  readonly jobId: string
  /** The lease of one batch: how long a worker may hold it before it is given to another. */
  readonly leaseSeconds: number
  /** Connection URL when the ledger is on a server. */
  readonly url?: string
  readonly onError?: (err: Error) => void
}

/** pg-boss on the ledger's database: through the embedded store's session, or its own pool by URL. */
function createBoss(sessions: LedgerSessions, options: WorkQueueOptions): PgBoss {
  const common = {
    schema: BOSS_SCHEMA,
    supervise: true,
    schedule: false,
    migrate: true,
    maintenanceIntervalSeconds: Math.max(1, Math.min(30, Math.floor(options.leaseSeconds / 4))),
    monitorStateIntervalSeconds: 60,
    archiveCompletedAfterSeconds: 3600,
  }
  // On the embedded store pg-boss runs multi-statement scripts (its migrations, locked
  // maintenance) without parameters: the embedded session runs those as scripts.
  if (sessions.embedded !== undefined) {
    return new PgBoss({ ...common, db: transactionAdapter(sessions.embedded) })
  }
  if (options.url === undefined) {
    throw new Error('a work queue on a server needs its URL')
  }
  return new PgBoss({ ...common, connectionString: options.url, max: 4, application_name: 'chatferry' })
}

/**
 * Starts pg-boss and creates (or updates) the queue. pg-boss's installation and queue creation (a
 * partition per queue) deadlock when several processes start at once: one process at a time sets
 * up, under a session-level advisory lock; pg-boss has no option for that.
 */
async function setUp(sessions: LedgerSessions, boss: PgBoss, queue: PgBoss.Queue & { expireInSeconds: number; retryLimit: number }): Promise<void> {
  await sessions.withSession(async (session) => {
    await session.executeSql(`select pg_advisory_lock(hashtext('chatferry.work-queue-setup'))`)
    try {
      await boss.start()
      const existing = await boss.getQueue(queue.name)
      if (existing === null) {
        await boss.createQueue(queue.name, queue)
      } else if (existing.expireInSeconds !== queue.expireInSeconds || existing.retryLimit !== queue.retryLimit) {
        await boss.updateQueue(queue.name, queue)
      }
    } finally {
      await session.executeSql(`select pg_advisory_unlock(hashtext('chatferry.work-queue-setup'))`)
    }
  })
}

/** Starts pg-boss on the ledger database and makes sure the job's queue exists. */
export async function startWorkQueue(sessions: LedgerSessions, options: WorkQueueOptions): Promise<WorkQueue> {
  const boss = createBoss(sessions, options)
  boss.on('error', (err) => options.onError?.(err))
  const name = queueName(options.jobId)
  await setUp(sessions, boss, {
    name,
    policy: 'standard' as const,
    expireInSeconds: options.leaseSeconds,
    // Retries are how a released or expired batch comes back; the ledger, not pg-boss, decides
    // when an item is given up (rejected), so the limit is effectively unbounded.
    retryLimit: 100_000,
    retryDelay: 1,
    retryBackoff: false,
  })
  return {
    boss,
    name,
    adapter: transactionAdapter,
    // pg-boss takes an id or an array of ids, then data, then options; its typings only declare
    // the array form without data, which would run outside the transaction.
    completeMany: (ids, trx) =>
      (boss.complete as (this: PgBoss, n: string, ids: string[], data: object, o: PgBoss.ConnectionOptions) => Promise<void>).call(
        boss,
        name,
        [...ids],
        {},
        { db: transactionAdapter(trx) },
      ),
    enqueue: async (trx, batchIds) => {
      await boss.insert(
        batchIds.map((batchId) => ({ id: queueJobId(batchId), name, data: { jobId: options.jobId, batchId } satisfies BatchJobData })),
        { db: transactionAdapter(trx) },
      )
    },
    withoutLiveJob: async (trx, batchIds) => {
      const r = await trx.executeSql(WITHOUT_LIVE_JOB, [name, [...batchIds]])
      return r.rows.map((x: { id: number | string }) => Number(x.id))
    },
    stop: () => boss.stop({ graceful: false, close: true, wait: true, timeout: 2000 }),
  }
}
