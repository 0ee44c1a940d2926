/**
 * The part of `chatferry load`, `worker` and `run` (and the demo) after the ledger is open: run the
 * job's loader (src/job/run-job-loader.ts) with the command's signals (signals.ts), draw its
 * progress on a terminal (progress-drawer.ts), map the outcome to an exit code.
 */
import type { Logger } from 'pino'

import type { FilesLaneCounters } from '../files/lane/files-lane.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { type JobLoadOutcome, runJobLoader } from '../job/run-job-loader.ts'
import { FatalLoadError } from '../load/fatal-load-error.ts'
import { type UpdateKindReport, updateReport, updateTotals } from '../load/update-progress.ts'
import { createLogger } from '../logger.ts'
import { PlatformError } from '../target/errors.ts'
import { EXIT } from './exit-codes.ts'
import { startMetricsEndpoint } from './metrics-server.ts'
import { createProgressDrawer } from './progress-drawer.ts'
import { stopOnSignals, type Stopper } from './signals.ts'

/**
 * Runs the loader for an open ledger context; returns the exit code. `stopper` carries the
 * command's signal wiring (signals.ts); without one, this installs its own.
 */
export async function runLoaderCommand(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  logger: Logger = createLogger(),
  stopper?: Stopper,
): Promise<number> {
  return (await runLoaderWithOutcome(ctx, mode, logger, stopper)).code
}

/**
 * {@link runLoaderCommand}, with the loader's outcome (both lanes), the id of the run row it wrote,
 * and where the job's updates stand afterwards (per kind, from the ledger).
 */
export async function runLoaderWithOutcome(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  logger: Logger = createLogger(),
  stopper?: Stopper,
): Promise<{ code: number; outcome: JobLoadOutcome; runId: number | undefined; updates: UpdateKindReport[] }> {
  const { config } = ctx
  const stop = stopper ?? stopOnSignals(logger, 'the batches in flight')
  stop.finishing = 'the batches in flight'

  const quota = { requestsPerMinute: config.target.quota.requestsPerMinute, itemsPerRequest: config.target.quota.itemsPerRequest }
  const tty = process.stderr.isTTY === true
  const drawer = createProgressDrawer(ctx.store, ctx.jobId, quota, logger)

  // A second signal quits before the loader's own finish: its run row still says why it ended.
  const removeQuitHook = stop.onQuit(async () => {
    const run = (await ctx.store.listRuns(ctx.jobId, 20)).find((r) => r.mode === mode && ownedHere(r.owner))
    if (run?.status === 'running') {
      await ctx.store.finishRun(run.id, 'interrupted', undefined, 'quit at once by a second signal')
    }
  })
  let outcome: JobLoadOutcome
  const endpoint = await startMetricsEndpoint(ctx, logger)
  try {
    outcome = await runJobLoader(ctx, {
      mode,
      logger: tty ? logger.child({}, { level: 'warn' }) : logger,
      signal: stop.signal,
      onTick: (counters) => {
        endpoint?.metrics.onTick(counters)
        void drawer.draw()
      },
      ...(endpoint !== undefined ? { onFilesTick: (counters: FilesLaneCounters) => endpoint.metrics.onFilesTick(counters) } : {}),
    })
  } finally {
    await endpoint?.stop()
    removeQuitHook()
    await drawer.stop()
    if (stopper === undefined) {
      stop.dispose()
    }
  }
  const runId = await loaderRunId(ctx, mode)
  const updates = updateReport(await ctx.store.updatePlan.counts(ctx.jobId).catch(() => []))
  const rejected = outcome.stats.reduce((a, s) => a + s.rejected, 0)
  const updatesRejected = updateTotals(updates).rejected
  const held =
    outcome.files !== undefined && (outcome.status === 'done' || outcome.status === 'rejected') ? await ctx.store.files.counts(ctx.jobId) : undefined
  if (held !== undefined && held.waitingMessages > 0) {
    // files.onFailure wait: the messages of failed files are held, not done; a later run tries the files again.
    logger.warn(
      { jobId: ctx.jobId, runId, waitingMessages: held.waitingMessages, failedFiles: held.failedWaiting },
      `finished; ${held.waitingMessages} message(s) wait for ${held.failedWaiting} file(s) that could not be copied (files.onFailure: wait; see: chatferry files failures) — run again to try them again`,
    )
    return { code: EXIT.REJECTED, outcome, runId, updates }
  }
  if (outcome.status === 'done') {
    logger.info({ jobId: ctx.jobId, runId }, 'every item is done or skipped, every update applied')
    return { code: EXIT.OK, outcome, runId, updates }
  }
  if (outcome.status === 'rejected') {
    logger.warn(
      { jobId: ctx.jobId, runId, rejected, updatesRejected },
      `finished; ${rejected} item(s) rejected${updatesRejected > 0 ? `, ${updatesRejected} update(s) of loaded items rejected` : ''} (see: chatferry rejects)`,
    )
    return { code: EXIT.REJECTED, outcome, runId, updates }
  }
  if (outcome.status === 'stopped') {
    return { code: mode === 'worker' ? EXIT.OK : EXIT.ERROR, outcome, runId, updates }
  }
  if (refusedCredentials(outcome.error)) {
    // A key revoked (or an app deleted) mid-load: rerunning the same command cannot fix that.
    process.stderr.write(
      `chatferry: ${outcome.error?.message ?? 'the platform refused the API key'} — fix target.apiKey (or the app), then run the same command again to resume\n`,
    )
    return { code: EXIT.USAGE, outcome, runId, updates }
  }
  process.stderr.write(`chatferry: ${outcome.error?.message ?? 'the loader stopped'} (run the same command again to resume)\n`)
  return { code: EXIT.ERROR, outcome, runId, updates }
}

/** Whether the loader stopped because the platform refused its credentials (HTTP 401/403). */
function refusedCredentials(err: Error | undefined): boolean {
  const cause = err instanceof FatalLoadError ? err.cause : undefined
  return cause instanceof PlatformError && cause.kind === 'http' && (cause.status === 401 || cause.status === 403)
}

/**
 * The run row the loader of this process wrote: the newest of its mode owned by this pid (the
 * loader names its runs `<host>/<pid>/<random>`).
 */
async function loaderRunId(ctx: LedgerContext, mode: 'load' | 'worker'): Promise<number | undefined> {
  try {
    const runs = await ctx.store.listRuns(ctx.jobId, 20)
    return runs.find((r) => r.mode === mode && ownedHere(r.owner))?.id
  } catch {
    return undefined
  }
}

/** Whether a run row's owner (`<host>/<pid>/<random>`) is this process. */
function ownedHere(owner: string | null | undefined): boolean {
  return (owner ?? '').split('/')[1] === String(process.pid)
}
