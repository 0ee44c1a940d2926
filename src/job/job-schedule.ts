/**
 * A job's recurring run as a pg-boss schedule (`chatferry schedule`, `unschedule`, `schedules`):
 * one schedule per job, in the job's own schedule queue in the ledger's database, carrying what to
 * run (`run` or `run --delta`). pg-boss's cron pass (in every `chatferry worker`) turns each
 * occurrence into one job of that queue; a worker serving the queue runs it (src/cli/scheduled-run.ts).
 * Only pg-boss's API is used here (`schedule`, `unschedule`, `getSchedules`); the queue and pg-boss
 * itself are set up by src/job/schedule-boss.ts.
 */
import { CronExpressionParser } from 'cron-parser'
import type { PgBoss } from 'pg-boss'

import type { LedgerSessions } from '../state/ledger-sessions.ts'
import { startScheduleBoss } from './schedule-boss.ts'

/** The prefix of every schedule queue: `chatferry-schedule-<job>`. */
const PREFIX = 'chatferry-schedule-'

/** What a scheduled trigger runs: `run` (a full pass, resuming) or `run --delta`. */
export type ScheduledMode = 'run' | 'delta'

/** The data of a schedule (and of each trigger it sends). */
export interface ScheduleData {
  readonly jobId: string
  readonly mode: ScheduledMode
}

/** One job's schedule, as `schedules` shows it. */
export interface JobSchedule {
  readonly jobId: string
  readonly cron: string
  readonly mode: ScheduledMode
  readonly timezone: string
  readonly queue: string
  readonly createdOn: string
  readonly updatedOn: string
}

/** The schedule queue of a ledger job. */
export function scheduleQueueName(jobId: string): string {
  return `${PREFIX}${jobId}`
}

/**
 * Why `cron` is not a usable schedule, or undefined when it is: five fields (minute first), or
 * six with seconds first, as pg-boss's cron pass reads them (cron-parser, non-strict, UTC).
 */
export function cronProblem(cron: string): string | undefined {
  if (cron.trim() === '') {
    return 'the cron expression is empty'
  }
  const fields = cron.trim().split(/\s+/).length
  if (fields < 5 || fields > 6) {
    return `"${cron}" has ${fields} field(s): a cron expression has 5 (minute hour day-of-month month day-of-week) or 6 (seconds first)`
  }
  try {
    CronExpressionParser.parse(cron, { tz: 'UTC', strict: false })
    return undefined
  } catch (err) {
    return `"${cron}" is not a cron expression: ${err instanceof Error ? err.message : String(err)}`
  }
}

/** The queue's settings: one trigger active at a time; a trigger that failed is not retried (the next occurrence is the retry). */
function queueSettings(jobId: string) {
  return { name: scheduleQueueName(jobId), policy: 'singleton' as const, expireInSeconds: 86_400, retryLimit: 0 }
}

/** pg-boss on the ledger's server for the schedules of `jobId`; `cron` takes part in the cron pass (workers only). */
export function openScheduler(sessions: LedgerSessions, url: string, jobId: string, cron = false, onError?: (err: Error) => void): Promise<PgBoss> {
  return startScheduleBoss(sessions, { url, cron, queues: [queueSettings(jobId)], ...(onError ? { onError } : {}) })
}

function toJobSchedule(s: { name: string; cron: string; timezone: string; data?: object; createdOn: Date; updatedOn: Date }): JobSchedule {
  const data = (s.data ?? {}) as Partial<ScheduleData>
  return {
    jobId: data.jobId ?? s.name.slice(PREFIX.length),
    cron: s.cron,
    mode: data.mode === 'delta' ? 'delta' : 'run',
    timezone: s.timezone,
    queue: s.name,
    createdOn: new Date(s.createdOn).toISOString(),
    updatedOn: new Date(s.updatedOn).toISOString(),
  }
}

/** The schedules of the ledger (every job's, or one job's), by job. */
export async function listSchedules(boss: PgBoss, jobId?: string): Promise<JobSchedule[]> {
  const all = jobId === undefined ? await boss.getSchedules() : await boss.getSchedules(scheduleQueueName(jobId))
  return all
    .filter((s) => s.name.startsWith(PREFIX))
    .map(toJobSchedule)
    .sort((a, b) => a.jobId.localeCompare(b.jobId))
}

/** Writes the job's schedule (replacing the one there was: the caller checks `--replace` first). */
export async function saveSchedule(boss: PgBoss, jobId: string, cron: string, mode: ScheduledMode): Promise<JobSchedule> {
  const name = scheduleQueueName(jobId)
  await boss.schedule(name, cron, { jobId, mode } satisfies ScheduleData, { tz: 'UTC', retryLimit: 0 })
  const [saved] = await listSchedules(boss, jobId)
  if (saved === undefined) {
    throw new Error(`pg-boss did not keep the schedule of job ${jobId}`)
  }
  return saved
}

/** Removes the job's schedule; returns the one removed, if there was one. */
export async function removeSchedule(boss: PgBoss, jobId: string): Promise<JobSchedule | undefined> {
  const [existing] = await listSchedules(boss, jobId)
  if (existing !== undefined) {
    await boss.unschedule(scheduleQueueName(jobId))
  }
  return existing
}
