/**
 * pg-boss in the ledger's database (schema `chatferry_boss`), for the one thing chatferry uses it
 * for: the jobs' schedules (src/job/job-schedule.ts; `chatferry worker` runs pg-boss's cron pass
 * and serves the schedule queues, src/cli/scheduled-run.ts). A unit of work (an import batch, an
 * update) is never a pg-boss job: it is leased in the ledger (src/state/lease-units.ts).
 *
 * Only pg-boss's API touches its tables, with one exception at set-up: a ledger whose pg-boss
 * schema is pg-boss 10's (version 24, which pg-boss 11+ refuses to migrate) has that schema moved
 * aside to {@link RETIRED_SCHEMA} (a rename, read from its `version` table) so that pg-boss 12
 * installs its own, as pg-boss 11's release notes ask; its jobs (load batches of old chatferry
 * versions, whose batches are leased in the ledger now) are not read. pg-boss's installation and
 * queue creation deadlock when several processes start at once, so set-up runs under a
 * session-level advisory lock ({@link withSetupLock}); pg-boss has no option for that.
 */
import { type Db, PgBoss, type Queue } from 'pg-boss'

import type { LedgerSessions } from '../state/ledger-sessions.ts'
import type { LedgerTransaction } from '../state/ledger-transaction.ts'

/** The Postgres schema pg-boss keeps its tables in. */
export const BOSS_SCHEMA = 'chatferry_boss'

/** Where a pg-boss 10 schema is moved aside. */
export const RETIRED_SCHEMA = `${BOSS_SCHEMA}_v10`
/** pg-boss 10's schema version, the last one before pg-boss 11's reinstall. */
const PG_BOSS_10_SCHEMA_VERSION = 24

/**
 * The pg-boss queue in which chatferry versions before the ledger lease kept a job's batches
 * (`chatferry-load-<job>`): `purge` deletes it (through pg-boss's API) when an old ledger still has it.
 */
export function legacyLoadQueueName(jobId: string): string {
  return `chatferry-load-${jobId}`
}

function sessionAdapter(session: LedgerTransaction): Db {
  return { executeSql: (text: string, values: unknown[] = []) => session.executeSql(text, values) }
}

/** Runs `work` holding the advisory lock every pg-boss set-up of the ledger takes. */
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

/** Moves a pg-boss 10 schema aside (see the header); refuses a pg-boss schema older than 10's. */
async function retirePgBoss10Schema(session: LedgerTransaction): Promise<void> {
  const r = await session.executeSql(
    `select to_regclass('${BOSS_SCHEMA}.version') is not null as current, to_regclass('${RETIRED_SCHEMA}.job') is not null as retired`,
  )
  const found = r.rows[0] as { current: boolean; retired: boolean }
  if (!found.current) {
    return
  }
  const v = await session.executeSql(`select version from ${BOSS_SCHEMA}.version`)
  const version = Number((v.rows[0] as { version: number | string } | undefined)?.version)
  if (version < PG_BOSS_10_SCHEMA_VERSION) {
    throw new Error(
      `the work queue (schema ${BOSS_SCHEMA}) is at pg-boss schema version ${version}: chatferry can upgrade only pg-boss 10's (${PG_BOSS_10_SCHEMA_VERSION}) and later`,
    )
  }
  if (version === PG_BOSS_10_SCHEMA_VERSION && !found.retired) {
    await session.executeSql(`alter schema ${BOSS_SCHEMA} rename to ${RETIRED_SCHEMA}`)
  }
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
 * pg-boss for schedules, on the ledger's server, set up under the advisory lock. With `cron`, this
 * process takes part in pg-boss's cron pass (one instance per pass wins the claim; each occurrence
 * becomes one job in the schedule's queue).
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

/**
 * Deletes these queues with their schedules and jobs, through pg-boss's API, when pg-boss is
 * installed in the ledger's database and they exist; returns the names deleted. `url` is the
 * ledger's server (absent for the embedded store, reached through its session).
 */
export async function deleteBossQueues(sessions: LedgerSessions, names: readonly string[], url?: string): Promise<string[]> {
  // Whether pg-boss was ever installed here: pg-boss would install itself to answer.
  const installed = await sessions.withSession((s) => s.executeSql(`select to_regclass('${BOSS_SCHEMA}.queue') is not null as installed`))
  if (!(installed.rows[0] as { installed?: boolean } | undefined)?.installed) {
    return []
  }
  const common = { schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: false }
  const boss =
    sessions.embedded !== undefined
      ? new PgBoss({ ...common, db: sessionAdapter(sessions.embedded) })
      : new PgBoss({ ...common, connectionString: url, max: 1, application_name: 'chatferry-purge' })
  boss.on('error', () => {})
  await boss.start()
  try {
    const deleted: string[] = []
    for (const name of names) {
      if ((await boss.getQueue(name)) === null) {
        continue
      }
      await boss.unschedule(name)
      await boss.deleteAllJobs(name)
      await boss.deleteQueue(name)
      deleted.push(name)
    }
    return deleted
  } finally {
    await boss.stop({ graceful: false, close: true, timeout: 2000 })
  }
}
