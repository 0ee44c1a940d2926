/**
 * A run of a job, where it starts and where it ends: the one owner of a run's life. `chatferry run`
 * (and so a scheduled run, which is that command started by a worker: src/cli/scheduled-run.ts) and
 * every tenant of `fleet run` go through {@link runJob}; the loader-only runs of `load`, `worker`
 * and `fleet worker` through {@link runLanes}. One run is one row of `chatferry.runs`
 * (run-row.ts): created once, here, and its id handed down; nothing looks for "its" row again.
 *
 * {@link runJob}, in order:
 *  1. a final delta (`run --delta --final`) is refused while the bulk load has work (final-delta.ts);
 *  2. the target pre-flight (check-target-access.ts), judged by the caller: a refusal it throws ends
 *     the run before any row (`run`: exit 2, nothing written); a reason it returns is recorded as
 *     the run's failure (a fleet tenant: `fleet status` shows it);
 *  3. the caller's last step before the row (`run --reread` resets the cursors), the job row;
 *  4. the run row (mode `run` or `delta`), beating from now to its end;
 *  5. the plan (plan-from-source.ts), in the caller's plan slot, its summary into the row, judged by
 *     the caller (a fleet tenant whose source yields nothing fails);
 *  6. the lanes — imports, updates, files (run-job-loader.ts) — their counters into the row;
 *  7. a final delta: did the source change after its read began (final-delta-check.ts);
 *  8. the end: the row finished with the outcome and why — also when a step threw (then rethrown).
 */
import type { Logger } from 'pino'

import type { FilesLaneCounters } from '../files/lane/files-lane.ts'
import type { LoaderCounters } from '../load/loader.ts'
import type { UpdateLaneCounters } from '../load/update-lane.ts'
import type { PlanJobSummary } from '../plan/plan-job.ts'
import type { EntityStats } from '../state/store.ts'
import { checkTargetAccess, type TargetAccess } from './check-target-access.ts'
import { type CutoverRecord, cutoverStarted, describeBlockers, finalDeltaBlockers } from './final-delta.ts'
import { checkSourceAfterFinal } from './final-delta-check.ts'
import type { LedgerContext } from './ledger-context.ts'
import { planFromSource, type PlanFromSourceOptions } from './plan-from-source.ts'
import { type JobLoadOutcome, runJobLoader } from './run-job-loader.ts'
import { openRunRow, type RunEnd, type RunRow } from './run-row.ts'

/** Where each lane's counters go, about once a second while it runs (a progress line, a metrics registry). */
export interface LaneTicks {
  onTick?(counters: LoaderCounters): void
  onFilesTick?(counters: FilesLaneCounters): void
  onUpdatesTick?(counters: UpdateLaneCounters): void
}

/** What a caller shows while the lanes run (a command's progress and metrics endpoint), opened when they start. */
export interface LanesDisplay extends LaneTicks {
  readonly logger?: Logger
  /** `final`: the job's counts the loader read as it finished (a last reading of its own is not needed then). */
  close(final?: readonly EntityStats[]): Promise<void>
}

/** What runs the lanes and how it is stopped: shared by {@link runJob} and {@link runLanes}. */
export interface LanesOptions {
  readonly logger: Logger
  /** Stops the run: the work in hand finishes, the row ends `interrupted` (a `worker`: `stopped`). */
  readonly signal: AbortSignal
  /** Who runs it, in the row's owner `<host>/<pid>/<role>`: `run`, `fleet-run`, `load`, `worker`, `fleet-worker`. */
  readonly role: string
  /** Opened when the lanes start, closed when they end. */
  readonly display?: () => Promise<LanesDisplay>
  /** The lanes' counters, about once a second (a fleet's metrics, the tenant's). */
  readonly ticks?: LaneTicks
  /** Called with the row's id as soon as it exists (a command's summary, its hooks). */
  readonly onRow?: (runId: number) => void
  /** A second signal quits at once: the row is ended `interrupted` first (the command's `onQuit`). */
  readonly onQuit?: (hook: () => Promise<unknown>) => () => void
  /** The row's error text of a failure. @default the first line of its message */
  readonly errorText?: (err: unknown) => string
}

export interface JobRunOptions extends LanesOptions {
  /** `full` reads everything not yet read (mode `run`); `delta` what changed since (mode `delta`). */
  readonly read: 'full' | 'delta'
  readonly detectDeletes?: boolean
  readonly reconcileKeys?: boolean
  /**
   * `run --delta --final`: guarded before it starts (`refusal`: the caller's error for it, `run`'s
   * exit 2), the source checked after its load, waiting `quietPeriodMs`; it always reconciles keys.
   */
  readonly final?: { readonly quietPeriodMs: number; refusal(message: string): Error }
  /** Step 2: throw to refuse before the row; return a reason to record the run as failed; undefined to go on. */
  judgeTarget(access: TargetAccess): Promise<string | undefined>
  /** Step 3: the caller's last step before the row. */
  readonly beforeRow?: () => Promise<void>
  /** Step 5: plans when a slot is free (a fleet's planConcurrency); undefined when stopped before its turn. */
  readonly planSlot?: (plan: () => Promise<PlanJobSummary | undefined>) => Promise<PlanJobSummary | undefined>
  readonly onPlanPage?: PlanFromSourceOptions['onPage']
  /** Step 5: shows the summary, or returns a reason the run fails (a fleet tenant's empty source). */
  readonly planned?: (summary: PlanJobSummary) => Promise<string | undefined>
}

/** How a run ended. A step that threw is rethrown after the row is finished. */
export interface JobRunResult {
  readonly runId: number
  readonly status: RunEnd
  readonly plan?: PlanJobSummary
  /** The lanes' outcome, when they ran. */
  readonly loaded?: JobLoadOutcome
  /** A final delta's record, once the source was checked. */
  readonly cutover?: CutoverRecord
  /** The caller's reason the run failed before its lanes (a refused target, an empty source). */
  readonly failedBecause?: string
}

const firstLine = (err: unknown) => (err instanceof Error ? (err.message.split('\n')[0] ?? '') : String(err))

/** Runs the job: plan, lanes, final check, in its one run row (see the file's header for the steps). */
export async function runJob(ctx: LedgerContext, options: JobRunOptions): Promise<JobRunResult> {
  const { logger, signal } = options
  if (options.final !== undefined) {
    const blockers = await finalDeltaBlockers(ctx.store, ctx.jobId)
    if (blockers.length > 0) {
      throw options.final.refusal(describeBlockers(blockers))
    }
  }
  const targetRefused = await options.judgeTarget(await checkTargetAccess(ctx.config, { signal }))
  await options.beforeRow?.()
  await ctx.store.ensureJob(ctx.jobId, ctx.config.target.appId)
  const row = await openRunRow(ctx.store, ctx.jobId, options.read === 'delta' ? 'delta' : 'run', options.role, options.final ? { final: true } : {})
  options.onRow?.(row.id)
  const fail = (failedBecause: string) => ended(ctx, row, { runId: row.id, status: 'failed', failedBecause }, failedBecause)
  return withRow(ctx, row, options, async () => {
    if (targetRefused !== undefined) {
      return fail(targetRefused)
    }
    const plan = () =>
      planFromSource(ctx, {
        mode: options.read,
        detectDeletes: options.detectDeletes === true,
        // The final delta always reconciles: no row the ledger never planned is left behind.
        reconcileKeys: options.reconcileKeys === true || options.final !== undefined,
        logger,
        signal,
        ...(options.onPlanPage ? { onPage: options.onPlanPage } : {}),
      })
    // A run stopped while it waited for its slot never plans.
    const summary = await (options.planSlot ? options.planSlot(() => (signal.aborted ? Promise.resolve(undefined) : plan())) : plan())
    if (summary === undefined) {
      return ended(ctx, row, { runId: row.id, status: 'interrupted' })
    }
    // The cutover time: when the final read's snapshot began (the source's clock).
    await row.record({ plan: summary, ...(options.final ? { cutover: cutoverStarted(summary.snapshotAt) } : {}) })
    const emptied = await options.planned?.(summary)
    if (emptied !== undefined) {
      return fail(emptied)
    }
    const loaded = await lanes(ctx, row, 'load', options)
    const status = runEnd(loaded, 'load', await filesHeld(ctx, loaded), signal)
    const cutover =
      options.final !== undefined && (status === 'succeeded' || status === 'rejected')
        ? await checkSourceAfterFinal(ctx, summary.snapshotAt, logger, { periodMs: options.final.quietPeriodMs, signal })
        : undefined
    if (cutover !== undefined) {
      await row.record({ cutover })
    }
    const error = loaded.error !== undefined ? (options.errorText ?? firstLine)(loaded.error) : undefined
    return ended(ctx, row, { runId: row.id, status, plan: summary, loaded, ...(cutover ? { cutover } : {}) }, error)
  })
}

/** The loader-only run of `load`, `worker` and `fleet worker`: its row (mode `load`/`worker`), the lanes, the end. */
export async function runLanes(
  ctx: LedgerContext,
  mode: 'load' | 'worker',
  options: LanesOptions,
): Promise<{ runId: number; loaded: JobLoadOutcome }> {
  await ctx.store.ensureJob(ctx.jobId, ctx.config.target.appId)
  const row = await openRunRow(ctx.store, ctx.jobId, mode, options.role)
  options.onRow?.(row.id)
  const result = await withRow(ctx, row, options, async () => {
    const loaded = await lanes(ctx, row, mode, options)
    const error = loaded.error !== undefined ? (options.errorText ?? firstLine)(loaded.error) : undefined
    return ended(ctx, row, { runId: row.id, status: runEnd(loaded, mode, await filesHeld(ctx, loaded), options.signal), loaded }, error)
  })
  return { runId: result.runId, loaded: result.loaded as JobLoadOutcome }
}

/** Runs `body` in the row: a second signal ends it `interrupted`; a throw ends it (failed, or interrupted when stopped) and is rethrown. */
async function withRow(ctx: LedgerContext, row: RunRow, options: LanesOptions, body: () => Promise<JobRunResult>): Promise<JobRunResult> {
  const removeQuitHook = options.onQuit?.(() => row.finish('interrupted', 'quit at once by a second signal'))
  try {
    return await body()
  } catch (err) {
    await end(ctx, row, options.signal.aborted ? 'interrupted' : 'failed', (options.errorText ?? firstLine)(err)).catch((e: unknown) =>
      options.logger.warn({ err: firstLine(e) }, 'recording the end of the run failed'),
    )
    throw err
  } finally {
    removeQuitHook?.()
  }
}

/** The lanes, in the row: its id in the loader's log, the loader's counters into the row (and every lane's to the ticks and the display), and the update lane's at the end. */
async function lanes(ctx: LedgerContext, row: RunRow, mode: 'load' | 'worker', options: LanesOptions): Promise<JobLoadOutcome> {
  const display = await options.display?.()
  let final: readonly EntityStats[] | undefined
  try {
    const loaded = await runJobLoader(ctx, {
      mode,
      runId: row.id,
      logger: display?.logger ?? options.logger,
      signal: options.signal,
      onTick: (counters) => {
        row.loaderCounters(counters)
        options.ticks?.onTick?.(counters)
        display?.onTick?.(counters)
      },
      onFilesTick: (counters) => {
        options.ticks?.onFilesTick?.(counters)
        display?.onFilesTick?.(counters)
      },
      onUpdatesTick: (counters) => {
        options.ticks?.onUpdatesTick?.(counters)
        display?.onUpdatesTick?.(counters)
      },
    })
    row.loaderCounters(loaded.counters)
    final = loaded.stats
    if (loaded.updates !== undefined) {
      await row.record({ updateLane: loaded.updates.counters })
    }
    return loaded
  } finally {
    await display?.close(final)
  }
}

/** Messages held for files that could not be copied (`files.onFailure: wait`) after lanes that finished. */
async function filesHeld(ctx: LedgerContext, loaded: JobLoadOutcome): Promise<number> {
  if (loaded.files === undefined || (loaded.status !== 'done' && loaded.status !== 'rejected')) {
    return 0
  }
  return (await ctx.store.files.counts(ctx.jobId)).waitingMessages
}

/**
 * The row's status from the lanes: a signal ends a `worker` the way it is meant to end (`stopped`)
 * and interrupts anything else, which the next run resumes (`interrupted`); messages still waiting
 * for files make a finished run `rejected` (its exit 3).
 */
export function runEnd(loaded: Pick<JobLoadOutcome, 'status'>, mode: 'load' | 'worker', waitingMessages: number, signal: AbortSignal): RunEnd {
  if (signal.aborted || loaded.status === 'stopped') {
    return mode === 'worker' ? 'stopped' : 'interrupted'
  }
  if (loaded.status === 'done') {
    return waitingMessages > 0 ? 'rejected' : 'succeeded'
  }
  return loaded.status
}

/**
 * Finishes the row with the job's entity counts in its stats and returns `result`: those the
 * loader read as it finished when it ran (a scan of the job's items: seconds on a large job), else
 * read now.
 */
async function ended(ctx: LedgerContext, row: RunRow, result: JobRunResult, error?: string): Promise<JobRunResult> {
  await end(ctx, row, result.status, error, result.loaded?.stats)
  return result
}

async function end(ctx: LedgerContext, row: RunRow, status: RunEnd, error?: string, read?: readonly EntityStats[]): Promise<void> {
  const stats = read ?? (await ctx.store.entityStats(ctx.jobId).catch(() => undefined))
  if (stats !== undefined) {
    await row.record({ stats }).catch(() => {})
  }
  await row.finish(status, error)
}
