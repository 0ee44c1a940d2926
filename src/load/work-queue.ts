/**
 * Load work as pg-boss jobs: one pg-boss job per ledger batch, in a queue per ledger job, in the
 * ledger's own database (schema `chatferry_boss`). pg-boss (12.x) gives the lease, the takeover of
 * a dead worker's batch (lost heartbeat → retry), and fetching with SKIP LOCKED across processes
 * and machines. On the embedded PGlite store it runs through a `db` adapter.
 *
 * The lease is pg-boss's job heartbeat (`heartbeatSeconds` = `load.leaseSeconds`): a worker renews
 * the lease of every batch it holds with {@link WorkQueue.touch} (with the ledger lease, in one
 * transaction; see `LoaderRun.renewLeases`), so a batch held through a long 429 pause or a slow
 * request keeps its lease, and a dead worker's batches come back one lease after its last renewal.
 * `expireInSeconds` is only the ceiling on holding one batch at all ({@link maxHoldSeconds}).
 * Jobs created by pg-boss 10 (before the heartbeat) keep their own fixed expiry until they settle.
 *
 * This is the one module that touches pg-boss's tables other than through pg-boss's API, in two
 * places only, because pg-boss has no API for either:
 * - {@link WorkQueue.withoutLiveJob}: which ledger batches have no live job (the orphan repair of
 *   `src/state/batch-ledger.ts` asks it, inside its transaction): pg-boss can look jobs up one by
 *   one, not check a set of ids against a state in one statement;
 * - the advisory lock around pg-boss's setup in {@link startWorkQueue} (see there);
 * - the upgrade of a ledger made with pg-boss 10, which pg-boss 11+ refuses to migrate (see
 *   `retirePgBoss10Schema`);
 * - {@link deleteWorkQueue} (`chatferry purge`): a queue's jobs go before pg-boss's `deleteQueue`,
 *   whose queue row the jobs' foreign key holds.
 * Ledger transactions reach pg-boss as opaque handles ({@link LedgerTransaction}) that
 * {@link WorkQueue.adapter} turns into pg-boss's `db` option.
 */
import { type Db, type Job, PgBoss, type Queue } from 'pg-boss'

export type { Job }

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
  adapter(trx: LedgerTransaction): Db
  /** Completes several jobs in one statement, inside `trx`. */
  completeMany(ids: readonly string[], trx: LedgerTransaction): Promise<void>
  /** Renews the lease (pg-boss heartbeat) of these active jobs, inside `trx`. */
  touch(ids: readonly string[], trx: LedgerTransaction): Promise<void>
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

function transactionAdapter(trx: LedgerTransaction): Db {
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
  /**
   * A pg-boss already started by {@link startSharedBoss}, which this queue uses instead of its own
   * (a fleet process serves many jobs' queues with one pool); stopping the queue leaves it running.
   */
  readonly shared?: SharedBoss
}

/** One pg-boss for the queues of many jobs in one process (a fleet): one pool and one supervisor. */
export interface SharedBoss {
  readonly boss: PgBoss
  stop(): Promise<void>
}

/** pg-boss's smallest heartbeat. */
const MIN_HEARTBEAT_SECONDS = 10

/** The pg-boss heartbeat of a lease: the lease itself, at least pg-boss's minimum. */
export function heartbeatSeconds(leaseSeconds: number): number {
  return Math.max(MIN_HEARTBEAT_SECONDS, Math.ceil(leaseSeconds))
}

/**
 * The ceiling on holding one batch, renewals included (pg-boss `expireInSeconds`, which runs from
 * the fetch and is not renewed): an hour, or the lease when longer; pg-boss allows at most 24 h.
 */
export function maxHoldSeconds(leaseSeconds: number): number {
  return Math.min(86_400, Math.max(3600, heartbeatSeconds(leaseSeconds)))
}

/** pg-boss on the ledger's database: through the embedded store's session, or its own pool by URL. */
function createBoss(sessions: LedgerSessions, options: Omit<WorkQueueOptions, 'jobId'> & { poolSize?: number }): PgBoss {
  // Expired leases (lost heartbeats) are found by pg-boss's monitor pass: a few times per lease.
  const sweepSeconds = Math.max(1, Math.min(30, Math.floor(options.leaseSeconds / 4)))
  const common = {
    schema: BOSS_SCHEMA,
    supervise: true,
    schedule: false,
    migrate: true,
    superviseIntervalSeconds: sweepSeconds,
    monitorIntervalSeconds: sweepSeconds,
    maintenanceIntervalSeconds: sweepSeconds,
    // chatferry registers its own processes (`chatferry.workers`); pg-boss's registry is not read.
    registerInstance: false,
    openTelemetry: { enabled: false },
  }
  // On the embedded store pg-boss runs multi-statement scripts (its migrations, locked
  // maintenance) without parameters: the embedded session runs those as scripts.
  if (sessions.embedded !== undefined) {
    return new PgBoss({ ...common, db: transactionAdapter(sessions.embedded) })
  }
  if (options.url === undefined) {
    throw new Error('a work queue on a server needs its URL')
  }
  return new PgBoss({ ...common, connectionString: options.url, max: options.poolSize ?? 4, application_name: 'chatferry' })
}

/**
 * Starts one pg-boss on the ledger's server for the queues of many jobs (a fleet process: one
 * loader per tenant), with `poolSize` connections, and makes sure the queues of `jobs` exist, in
 * one hold of the setup lock (one hold per job would queue every process of the fleet behind each
 * other); their loaders then open them with {@link startWorkQueue} and `shared`.
 */
export async function startSharedBoss(
  sessions: LedgerSessions,
  options: {
    url: string
    jobs: readonly { jobId: string; leaseSeconds: number }[]
    poolSize: number
    sweepLeaseSeconds: number
    onError?: (err: Error) => void
  },
): Promise<SharedBoss> {
  const boss = createBoss(sessions, { url: options.url, leaseSeconds: options.sweepLeaseSeconds, poolSize: options.poolSize })
  boss.on('error', (err) => options.onError?.(err))
  await withSetupLock(sessions, async (session) => {
    const retired = await retirePgBoss10Schema(session)
    await boss.start()
    for (const job of options.jobs) {
      const queue = loadQueueSettings(queueName(job.jobId), job.leaseSeconds)
      await ensureQueue(boss, queue)
      if (retired) {
        await adoptPgBoss10Jobs(session, boss, queue)
      }
    }
  })
  return { boss, stop: () => boss.stop({ graceful: false, close: true, timeout: 2000 }) }
}

/** Runs `work` holding the advisory lock every pg-boss setup of the ledger takes (see {@link setUp}). */
async function withSetupLock(sessions: LedgerSessions, work: (session: LedgerTransaction) => Promise<void>): Promise<void> {
  await sessions.withSession(async (session) => {
    await session.executeSql(`select pg_advisory_lock(hashtext('chatferry.work-queue-setup'))`)
    try {
      await work(session)
    } finally {
      await session.executeSql(`select pg_advisory_unlock(hashtext('chatferry.work-queue-setup'))`)
    }
  })
}

/** Where the work queue of a ledger created with pg-boss 10 is moved while its jobs are copied. */
export const RETIRED_SCHEMA = `${BOSS_SCHEMA}_v10`
/** pg-boss 10's schema version, the last one before pg-boss 11's reinstall. */
const PG_BOSS_10_SCHEMA_VERSION = 24

/**
 * pg-boss 11 and 12 cannot migrate pg-boss 10's schema (version 24): pg-boss 11 installs a new
 * schema and leaves moving the jobs to its users. When the ledger's work queue is pg-boss 10's, it
 * is renamed to {@link RETIRED_SCHEMA}, so that pg-boss 12 installs its own; true when there are
 * jobs to adopt (a retired schema of an earlier, interrupted upgrade counts too). Every chatferry
 * process on the ledger must be stopped and upgraded first (an old one would find its tables gone).
 */
async function retirePgBoss10Schema(session: LedgerTransaction): Promise<boolean> {
  const r = await session.executeSql(
    `select to_regclass('${BOSS_SCHEMA}.version') is not null as current, to_regclass('${RETIRED_SCHEMA}.job') is not null as retired`,
  )
  const found = r.rows[0] as { current: boolean; retired: boolean }
  if (found.current) {
    const v = await session.executeSql(`select version from ${BOSS_SCHEMA}.version`)
    const version = Number((v.rows[0] as { version: number | string } | undefined)?.version)
    if (version < PG_BOSS_10_SCHEMA_VERSION) {
      throw new Error(
        `the work queue (schema ${BOSS_SCHEMA}) is at pg-boss schema version ${version}: chatferry can upgrade only pg-boss 10's (${PG_BOSS_10_SCHEMA_VERSION}) and later`,
      )
    }
    if (version === PG_BOSS_10_SCHEMA_VERSION && !found.retired) {
      await session.executeSql(`alter schema ${BOSS_SCHEMA} rename to ${RETIRED_SCHEMA}`)
      return true
    }
  }
  return found.retired
}

/**
 * Copies the unfinished chatferry jobs of the retired pg-boss 10 schema into pg-boss 12's queues
 * (same ids and data; each queue created with `settings` when missing, and set to its own lease
 * when its job's loader starts), then drops the retired schema. Active jobs come back as new: their
 * holder is gone (or fenced out at the next claim, which gives the batch a new lease token).
 * Inserting is idempotent (the ids are fixed), so an upgrade interrupted here is finished by the
 * next start; a batch whose job were lost anyway would be planned again by the orphan repair.
 */
async function adoptPgBoss10Jobs(session: LedgerTransaction, boss: PgBoss, queue: Queue): Promise<void> {
  const { name: _name, ...settings } = queue
  const r = await session.executeSql(
    `select id::text as id, name, data from ${RETIRED_SCHEMA}.job where name like 'chatferry-load-%' and state < 'completed' order by name, id`,
  )
  const byQueue = new Map<string, { id: string; data: object }[]>()
  for (const row of r.rows as { id: string; name: string; data: object }[]) {
    const jobs = byQueue.get(row.name) ?? []
    jobs.push({ id: row.id, data: row.data })
    byQueue.set(row.name, jobs)
  }
  for (const [name, jobs] of byQueue) {
    if ((await boss.getQueue(name)) === null) {
      await boss.createQueue(name, settings)
    }
    await boss.insert(name, jobs)
  }
  await session.executeSql(`drop schema ${RETIRED_SCHEMA} cascade`)
}

type QueueSettings = Queue & { expireInSeconds: number; retryLimit: number; heartbeatSeconds: number }

/** A load queue's pg-boss settings for a lease (the same for every job). */
function loadQueueSettings(name: string, leaseSeconds: number): QueueSettings {
  return {
    name,
    policy: 'standard' as const,
    heartbeatSeconds: heartbeatSeconds(leaseSeconds),
    expireInSeconds: maxHoldSeconds(leaseSeconds),
    // Retries are how a released or expired batch comes back; the ledger, not pg-boss, decides
    // when an item is given up (rejected), so the limit is effectively unbounded.
    retryLimit: 100_000,
    retryDelay: 1,
    retryBackoff: false,
  }
}

/** Whether an existing queue has the lease settings `queue` asks for. */
function sameSettings(existing: Queue | null, queue: QueueSettings): boolean {
  return (
    existing !== null &&
    existing.expireInSeconds === queue.expireInSeconds &&
    existing.retryLimit === queue.retryLimit &&
    existing.heartbeatSeconds === queue.heartbeatSeconds
  )
}

/** Creates the queue, or gives an existing one the lease settings (inside the setup lock). */
async function ensureQueue(boss: PgBoss, queue: QueueSettings): Promise<void> {
  const existing = await boss.getQueue(queue.name)
  if (existing === null) {
    await boss.createQueue(queue.name, queue)
  } else if (!sameSettings(existing, queue)) {
    // A queue created by pg-boss 10 (or with another lease) gets the heartbeat here. pg-boss's
    // typings leave `heartbeatSeconds` out of updateQueue, but its update statement sets it.
    const { name, policy: _policy, ...settings } = queue
    await (boss.updateQueue as (this: PgBoss, n: string, o: Omit<Queue, 'name' | 'policy'>) => Promise<void>).call(boss, name, settings)
  }
}

/**
 * Starts pg-boss and creates (or updates) the queue. pg-boss's installation and queue creation (a
 * partition per queue) deadlock when several processes start at once: one process at a time sets
 * up, under a session-level advisory lock; pg-boss has no option for that. A shared pg-boss (a
 * fleet process) is started already; its queue, when it stands as wanted, needs no lock.
 */
async function setUp(sessions: LedgerSessions, boss: PgBoss, started: boolean, queue: QueueSettings): Promise<void> {
  if (started && sameSettings(await boss.getQueue(queue.name), queue)) {
    return
  }
  await withSetupLock(sessions, async (session) => {
    const retired = await retirePgBoss10Schema(session)
    if (!started) {
      await boss.start()
    }
    await ensureQueue(boss, queue)
    if (retired) {
      await adoptPgBoss10Jobs(session, boss, queue)
    }
  })
}

/** Starts pg-boss on the ledger database and makes sure the job's queue exists. */
export async function startWorkQueue(sessions: LedgerSessions, options: WorkQueueOptions): Promise<WorkQueue> {
  const boss = options.shared?.boss ?? createBoss(sessions, options)
  if (options.shared === undefined) {
    boss.on('error', (err) => options.onError?.(err))
  }
  const name = queueName(options.jobId)
  await setUp(sessions, boss, options.shared !== undefined, loadQueueSettings(name, options.leaseSeconds))
  return {
    boss,
    name,
    adapter: transactionAdapter,
    completeMany: async (ids, trx) => {
      await boss.complete(name, [...ids], {}, { db: transactionAdapter(trx) })
    },
    touch: async (ids, trx) => {
      await boss.touch(name, [...ids], { db: transactionAdapter(trx) })
    },
    enqueue: async (trx, batchIds) => {
      await boss.insert(
        name,
        batchIds.map((batchId) => ({ id: queueJobId(batchId), data: { jobId: options.jobId, batchId } satisfies BatchJobData })),
        { db: transactionAdapter(trx) },
      )
    },
    withoutLiveJob: async (trx, batchIds) => {
      const r = await trx.executeSql(WITHOUT_LIVE_JOB, [name, [...batchIds]])
      return r.rows.map((x: { id: number | string }) => Number(x.id))
    },
    stop: async () => {
      if (options.shared === undefined) {
        await boss.stop({ graceful: false, close: true, timeout: 2000 })
      }
    },
  }
}

/**
 * Deletes the queue of `jobId`, and the queues named in `also` with their schedules (a job's
 * recurring run), when pg-boss is installed in the ledger's database and they exist; returns the
 * names deleted. `url` is the ledger's server (absent for the embedded store).
 */
export async function deleteWorkQueue(sessions: LedgerSessions, jobId: string, url?: string, also: readonly string[] = []): Promise<string[]> {
  const installed = await sessions.withSession((s) => s.executeSql(`select to_regclass('${BOSS_SCHEMA}.queue') is not null as installed`))
  if (!(installed.rows[0] as { installed?: boolean } | undefined)?.installed) {
    return []
  }
  const common = { schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: false }
  const boss =
    sessions.embedded !== undefined
      ? new PgBoss({ ...common, db: { executeSql: (text: string, values: unknown[] = []) => sessions.embedded!.executeSql(text, values) } })
      : new PgBoss({ ...common, connectionString: url, max: 1, application_name: 'chatferry-purge' })
  boss.on('error', () => {})
  await boss.start()
  try {
    const deleted: string[] = []
    for (const name of [queueName(jobId), ...also]) {
      if (await deleteQueueAndJobs(boss, sessions, name)) {
        deleted.push(name)
      }
    }
    return deleted
  } finally {
    await boss.stop({ graceful: false, close: true, timeout: 2000 })
  }
}

/** Deletes one queue: its schedule (a job's recurring run), its jobs (with the archive's), then the queue. */
async function deleteQueueAndJobs(boss: PgBoss, sessions: LedgerSessions, name: string): Promise<boolean> {
  if ((await boss.getQueue(name)) === null) {
    return false
  }
  await boss.unschedule(name)
  // pg-boss drops the queue's partition, but its queue row is held by the jobs' foreign key
  // (ON DELETE RESTRICT) while any job of the queue is left: those go first, with the archive's.
  await sessions.withSession(async (s) => {
    await s.executeSql(`delete from ${BOSS_SCHEMA}.job where name = $1`, [name])
    // pg-boss 10 kept finished jobs in an archive table; pg-boss 12 has none.
    const archive = await s.executeSql(`select to_regclass('${BOSS_SCHEMA}.archive') is not null as present`)
    if ((archive.rows[0] as { present?: boolean } | undefined)?.present) {
      await s.executeSql(`delete from ${BOSS_SCHEMA}.archive where name = $1`, [name])
    }
  })
  await boss.deleteQueue(name)
  return true
}

export interface ScheduleBossOptions {
  /** The ledger's server (schedules need one: the embedded store serves one process). */
  readonly url: string
  /** Run pg-boss's cron pass in this process (a worker), or only read and write schedules (the commands). */
  readonly cron: boolean
  /** Queues to create when missing (a queue must exist before pg-boss schedules or serves it). */
  readonly queues: readonly { name: string; policy: Queue['policy']; expireInSeconds: number; retryLimit: number }[]
  readonly onError?: (err: Error) => void
}

/**
 * pg-boss for schedules (src/job/job-schedule.ts), on the ledger's server: set up under the same
 * advisory lock as {@link startWorkQueue}. With `cron`, this process takes part in pg-boss's cron
 * pass (one instance per pass wins the claim; each occurrence becomes one job in the schedule's queue).
 */
export async function startScheduleBoss(sessions: LedgerSessions, options: ScheduleBossOptions): Promise<PgBoss> {
  const boss = new PgBoss({
    schema: BOSS_SCHEMA,
    connectionString: options.url,
    max: 2,
    application_name: 'chatferry-schedule',
    migrate: true,
    supervise: options.cron,
    schedule: options.cron,
    // A pass every few seconds (pg-boss allows 1–45): an occurrence is due within its minute.
    cronMonitorIntervalSeconds: 5,
    cronWorkerIntervalSeconds: 1,
    registerInstance: false,
    openTelemetry: { enabled: false },
  })
  boss.on('error', (err) => options.onError?.(err))
  await withSetupLock(sessions, async (session) => {
    // A ledger made with pg-boss 10: its schema is moved aside here too (pg-boss 12 would refuse
    // it); the next startWorkQueue of any loader or worker adopts its jobs.
    await retirePgBoss10Schema(session)
    await boss.start()
    for (const { name, ...settings } of options.queues) {
      if ((await boss.getQueue(name)) === null) {
        await boss.createQueue(name, settings)
      }
    }
  })
  return boss
}
