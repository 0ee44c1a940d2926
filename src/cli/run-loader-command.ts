/**
 * The loader's part of `chatferry load`, `worker` and `run` (and the demo) after the ledger is open:
 * the loader-only run of the job (src/job/job-run.ts `runLanes`, which owns its run row) with the
 * command's signals (signals.ts), its progress drawn on a terminal (progress-drawer.ts) and the
 * metrics endpoint while the lanes run ({@link openLoaderDisplay}, also used by `run`), and the
 * outcome mapped to an exit code ({@link loaderExit}, also used by `run`).
 */
import type { Logger } from 'pino'

import type { LanesDisplay } from '../job/job-run.ts'
import { runLanes } from '../job/job-run.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import type { JobLoadOutcome } from '../job/run-job-loader.ts'
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
 * {@link runLoaderCommand}, with the loader's outcome (both lanes), the id of its run row, and
 * where the job's updates stand afterwards (per kind, from the ledger).
 */
export async function runLoaderWithOutcome(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  logger: Logger = createLogger(),
  stopper?: Stopper,
): Promise<{ code: number; outcome: JobLoadOutcome; runId: number; updates: UpdateKindReport[] }> {
  const stop = stopper ?? stopOnSignals(logger, 'the batches in flight')
  try {
    const { runId, loaded } = await runLanes(ctx, mode, {
      role: mode,
      logger,
      signal: stop.signal,
      display: () => openLoaderDisplay(ctx, logger, stop),
      onQuit: (hook) => stop.onQuit(hook),
    })
    return { ...(await loaderExit(ctx, mode, loaded, runId, logger)), outcome: loaded, runId }
  } finally {
    if (stopper === undefined) {
      stop.dispose()
    }
  }
}

/** While the lanes run: a first signal finishes the batches in flight; progress on a terminal; the metrics endpoint. */
export async function openLoaderDisplay(ctx: LedgerContext, logger: Logger, stop: Stopper): Promise<LanesDisplay> {
  stop.finishing = 'the batches in flight'
  const quota = { requestsPerMinute: ctx.config.target.quota.requestsPerMinute, itemsPerRequest: ctx.config.target.quota.itemsPerRequest }
  const tty = process.stderr.isTTY === true
  const drawer = createProgressDrawer(ctx.store, ctx.jobId, quota, logger)
  const endpoint = await startMetricsEndpoint(ctx, logger)
  return {
    logger: tty ? logger.child({}, { level: 'warn' }) : logger,
    onTick: (counters) => {
      endpoint?.metrics.onTick(counters)
      void drawer.draw()
    },
    ...(endpoint !== undefined ? { onFilesTick: endpoint.metrics.onFilesTick, onUpdatesTick: endpoint.metrics.onUpdatesTick } : {}),
    close: async (final) => {
      await endpoint?.stop()
      await drawer.stop(final)
    },
  }
}

/** The exit code of the lanes' outcome, said on stderr and in the log; and where the job's updates stand. */
export async function loaderExit(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  outcome: JobLoadOutcome,
  runId: number,
  logger: Logger,
): Promise<{ code: number; updates: UpdateKindReport[] }> {
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
    return { code: EXIT.REJECTED, updates }
  }
  if (outcome.status === 'done') {
    logger.info({ jobId: ctx.jobId, runId }, 'every item is done or skipped, every update applied')
    return { code: EXIT.OK, updates }
  }
  if (outcome.status === 'rejected') {
    logger.warn(
      { jobId: ctx.jobId, runId, rejected, updatesRejected },
      `finished; ${rejected} item(s) rejected${updatesRejected > 0 ? `, ${updatesRejected} update(s) of loaded items rejected` : ''} (see: chatferry rejects)`,
    )
    return { code: EXIT.REJECTED, updates }
  }
  if (outcome.status === 'stopped') {
    return { code: mode === 'worker' ? EXIT.OK : EXIT.ERROR, updates }
  }
  if (refusedCredentials(outcome.error)) {
    // A key revoked (or an app deleted) mid-load: rerunning the same command cannot fix that.
    process.stderr.write(
      `chatferry: ${outcome.error?.message ?? 'the platform refused the API key'} — fix target.apiKey (or the app), then run the same command again to resume\n`,
    )
    return { code: EXIT.USAGE, updates }
  }
  process.stderr.write(`chatferry: ${outcome.error?.message ?? 'the loader stopped'} (run the same command again to resume)\n`)
  return { code: EXIT.ERROR, updates }
}

/** Whether the loader stopped because the platform refused its credentials (HTTP 401/403). */
function refusedCredentials(err: Error | undefined): boolean {
  const cause = err instanceof FatalLoadError ? err.cause : undefined
  return cause instanceof PlatformError && cause.kind === 'http' && (cause.status === 401 || cause.status === 403)
}
