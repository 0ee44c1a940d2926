/**
 * What a `chatferry worker` does with a trigger of its job's schedule (src/job/job-schedule.ts):
 * unless a `run` of the job is going (a live `running` run row of mode run or delta: then the
 * trigger is skipped, and the log and the trigger's pg-boss output say which run), it runs
 * `chatferry run [--delta] --json` for the job, as a child process with the worker's configuration,
 * so a scheduled run is exactly what the same command typed by hand does: its run row, its exit
 * code, its one JSON summary (kept as the trigger's output). pg-boss's `singleton` queue keeps two
 * triggers of one job from being active at once across workers.
 */
import { spawn } from 'node:child_process'

import type { PgBoss } from 'pg-boss'
import type { Logger } from 'pino'

import { type ScheduleData, scheduleQueueName } from '../job/job-schedule.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { deadRunReason } from '../job/run-liveness.ts'
import { markDeadRuns } from '../job/run-row.ts'

/** The outcome of one trigger, kept by pg-boss as the job's output. */
export type TriggerOutcome =
  | { readonly skipped: true; readonly because: string; readonly runningRunId: number }
  | { readonly skipped: false; readonly exitCode: number | null; readonly summary: unknown }

/** The live run of the job (`run` or `run --delta`) that a trigger must not overlap, if any. */
async function runGoing(ctx: LedgerContext): Promise<{ id: number; mode: string; owner: string | null } | undefined> {
  await markDeadRuns(ctx.store, ctx.jobId)
  const runs = await ctx.store.listRuns(ctx.jobId, 100)
  return runs.find((r) => r.status === 'running' && (r.mode === 'run' || r.mode === 'delta') && deadRunReason(r) === undefined)
}

/** `chatferry run [--delta] --json -c <file> --job <job>` as a child of this process; its exit code and summary. */
function runChild(ctx: LedgerContext, mode: ScheduleData['mode'], logger: Logger, children: Set<ReturnType<typeof spawn>>): Promise<TriggerOutcome> {
  const args = [...process.execArgv, process.argv[1] ?? '', 'run', ...(mode === 'delta' ? ['--delta'] : []), '--json']
  args.push('--config', ctx.config.file, '--job', ctx.jobId)
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'], env: process.env })
  children.add(child)
  let stdout = ''
  child.stdout.on('data', (b: Buffer) => (stdout += b.toString()))
  return new Promise((resolve) => {
    child.on('close', (code) => {
      children.delete(child)
      let summary: unknown
      try {
        summary = JSON.parse(stdout.trim().split('\n').pop() ?? 'null')
      } catch {
        summary = null
      }
      logger.info({ jobId: ctx.jobId, mode, exitCode: code, summary }, `scheduled ${mode} of job ${ctx.jobId} ended with exit ${code}`)
      resolve({ skipped: false, exitCode: code, summary })
    })
  })
}

/**
 * Serves the job's schedule queue on `boss` until {@link stop}: one trigger at a time per worker.
 * Returns a stop that waits for a scheduled run in progress after asking it to finish (SIGTERM).
 */
export async function serveSchedule(boss: PgBoss, ctx: LedgerContext, logger: Logger): Promise<() => Promise<void>> {
  const children = new Set<ReturnType<typeof spawn>>()
  const queue = scheduleQueueName(ctx.jobId)
  await boss.work<ScheduleData>(queue, { pollingIntervalSeconds: 1, batchSize: 1 }, async ([job]) => {
    if (job === undefined) {
      return undefined
    }
    const going = await runGoing(ctx)
    if (going !== undefined) {
      const because = `run ${going.id} (${going.mode}, ${going.owner ?? 'owner unknown'}) of job ${ctx.jobId} is going`
      logger.warn({ jobId: ctx.jobId, trigger: job.id, runningRunId: going.id }, `scheduled ${job.data.mode} skipped: ${because}`)
      return { skipped: true, because, runningRunId: going.id } satisfies TriggerOutcome
    }
    logger.info({ jobId: ctx.jobId, trigger: job.id }, `scheduled ${job.data.mode} of job ${ctx.jobId} starting`)
    return runChild(ctx, job.data.mode, logger, children)
  })
  return async () => {
    for (const child of children) {
      child.kill('SIGTERM')
    }
    await boss.offWork(queue, { wait: true })
    await boss.stop({ graceful: false, close: true, timeout: 2000 })
  }
}
