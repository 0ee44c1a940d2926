import { type Command, Option } from 'commander'

import { cutoverStarted } from '../../job/final-delta.ts'
import { planFromSource } from '../../job/plan-from-source.ts'
import { createLogger } from '../../logger.ts'
import { formatPlanSummary } from '../../plan/format-plan-summary.ts'
import type { RunStatus } from '../../state/schema.ts'
import { buildSummary, jsonRequested, noteSummary, printSummary, printSummaryIfMissing, startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { admitJob, type AdmittedJob, forgetJobIfPhantom } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { jsonOption } from '../options.ts'
import { createPlanProgress } from '../progress-drawer.ts'
import { RUN_HEARTBEAT_MS, runOwnerOfThisProcess } from '../run-liveness.ts'
import { runLoaderWithOutcome } from '../run-loader-command.ts'
import { notifyRunEnd, rejectedNow } from '../run-notify.ts'
import { runStoppable, stoppedBy } from '../signals.ts'
import { requireTargetAccess } from '../target-preflight.ts'
import { UsageError } from '../usage-error.ts'
import { parseEntityList, refuseWhileRunLive } from './cursors.ts'
import { addLoaderOptions, loaderContextOptions, type LoaderFlags, NEW_JOB_FLAG_HELP, NEW_JOB_OPTION_HELP } from './load.ts'
import { checkSourceAfterFinal, parseQuietPeriod, refuseFinalWhileBusy, requireDeltaForFinal } from './run-final.ts'

/** `chatferry run`: extract → map → validate → plan → load, resuming wherever an earlier run stopped. */
export function registerRunCommand(program: Command): void {
  const run = addLoaderOptions(
    program
      .command('run')
      .summary('migrate: extract, map, plan into the ledger, load at the quota; resumable')
      .description(
        'Migrate: check that the platform takes the API key, read the legacy source, map and plan every record into the ' +
          'ledger, then load at the quota. Rerun the same command after any failure: it resumes from the ledger. ' +
          'Creates the job on its first run. Ends with a summary (one JSON object on stdout with --json).',
      )
      .option('--new-job', NEW_JOB_FLAG_HELP)
      .option('--delta', 'read only rows added or changed since the last completed read (for catch-up runs before cutover)')
      .option(
        '--reread <entities>',
        'read these entities again from their first row (comma-separated, or all), after a policy change: loaded items whose mapping changed are updated through the update lane, parts of split messages no longer needed are deleted (same as `cursors reset` then `run`; an interrupted reread resumes with plain `run`)',
      )
      .option(
        '--detect-deletes',
        'with --delta: also find messages hard-deleted from the source (one keys-only scan of the messages table; users, groups and members are always compared)',
      )
      .option(
        '--reconcile-keys',
        'with --delta: also plan every source row the ledger never planned (a keys-only read of each entity; on every delta.reconcileKeysEvery-th delta and in the final delta anyway)',
      )
      .option(
        '--final',
        "with --delta: the cutover's last delta; refused while the bulk load has work, records when its read began, and after its load counts source rows changed since (exit 4 when any)",
      )
      .addOption(
        new Option(
          '--quiet-period <duration>',
          'with --final: when no source row changed since the read began, wait this long (90s, 5m, 1h) and check again, so "frozen" covers at least that (default: 0, one check)',
        ).argParser(parseQuietPeriod),
      ),
    NEW_JOB_OPTION_HELP,
  )
  withHelp(run, {
    exits: [
      [0, 'every item done, or skipped by policy'],
      [3, 'finished, some items rejected: chatferry rejects'],
      [
        1,
        'stopped by an outage of the source or the platform, or by SIGINT/SIGTERM (or the death of its parent): run the same command again, it resumes',
      ],
      [
        4,
        'run --delta --final finished, but the source changed after its read began (or during --quiet-period): freeze the legacy system and run it again',
      ],
      [
        2,
        'nothing a rerun can fix: usage or configuration error; a job the ledger does not hold while it holds others, without --new-job; --final while the bulk load still has work (the message names the command to run); the platform refused the API key or does not know the app (checked before the source is read); the source refused a query or login (missing table or column, bad credentials)',
      ],
    ],
    examples: [
      ['run', 'migrate with ./chatferry.yaml, resuming where the last run stopped'],
      ['run -c /etc/chatferry/acme.yaml --json', 'for a scheduler: one JSON summary on stdout, logs on stderr'],
      ['run --delta', 'catch up on rows added or changed since the last completed read'],
      ['run --reread messages', 'after a policy change (say longText: truncate): read every message again and update the loaded ones'],
      ['run --delta --detect-deletes', 'catch up, and also find messages deleted from the source'],
      ['run --delta --reconcile-keys', 'catch up, and also load rows that appeared below the watermark (late commits, no change-time column)'],
      ['run --delta --final --quiet-period 5m --json', 'the cutover: the last delta; frozen means 5 minutes without a change'],
      ['run --concurrency 8 --lease-seconds 180', 'more batches in flight per process'],
    ],
  })
  run
    .addOption(
      jsonOption(
        'print one JSON summary object on stdout (status, exitCode, jobId, runId, durationMs, entities); the plan summary and logs go to stderr',
      ),
    )
    .action(
      async (
        opts: LoaderFlags & {
          newJob?: boolean
          delta?: boolean
          detectDeletes?: boolean
          reconcileKeys?: boolean
          final?: boolean
          quietPeriod?: number
          reread?: string
        },
      ) => {
        const reread = opts.reread !== undefined ? parseEntityList(opts.reread, '--reread') : undefined
        if (reread && opts.delta) {
          throw new UsageError('--reread is a full read of the entities named: run it without --delta (run --reread messages)')
        }
        if (opts.detectDeletes && !opts.delta) {
          throw new UsageError('--detect-deletes needs --delta: a full run compares nothing (run --delta --detect-deletes)')
        }
        if (opts.reconcileKeys && !opts.delta) {
          throw new UsageError('--reconcile-keys needs --delta: a full run reads every row anyway (run --delta --reconcile-keys)')
        }
        startSummary('run', opts.json === true)
        requireDeltaForFinal(opts)
        if (opts.quietPeriod !== undefined && !opts.final) {
          throw new UsageError('--quiet-period needs --delta --final: it is how long the final check waits for the source to stay frozen')
        }
        const logger = createLogger()
        const code = await runStoppable(logger, 'the page being planned, then closing the source read', async (stopper) => {
          const ctx = await openCommandContext(loaderContextOptions(opts))
          let admitted: AdmittedJob | undefined
          let ended: number | undefined
          try {
            noteSummary({ jobId: ctx.jobId })
            // Before the platform or the source is asked anything: a mistyped --job starts nothing.
            admitted = await admitJob(ctx, opts.newJob === true)
            if (opts.final) {
              await refuseFinalWhileBusy(ctx)
            }
            // Before any source read: a key the platform refuses would otherwise be found only
            // after the whole extraction.
            await requireTargetAccess(ctx, logger, stopper.signal)
            // The run row references the job: a first run on a fresh ledger must create the job first.
            await ctx.store.ensureJob(ctx.jobId, ctx.config.target.appId)
            if (reread) {
              await refuseWhileRunLive(ctx.store, ctx.jobId, 'not rereading')
              await ctx.store.resetCursors(ctx.jobId, reread)
              logger.info(
                { entities: reread },
                `reading ${reread.join(', ')} again from the first row; changes of loaded items go through the update lane`,
              )
            }
            const rejectedBefore = await rejectedNow(ctx)
            const startedAt = Date.now()
            const runId = await ctx.store.startRun(ctx.jobId, opts.delta ? 'delta' : 'run', runOwnerOfThisProcess('run'))
            noteSummary({ runId })
            // The run row's stats, added to as the run goes (`runs` reads them): each write replaces the last.
            let runStats: Record<string, unknown> = opts.final ? { final: true } : {}
            const recordStats = (more: Record<string, unknown>) => {
              runStats = { ...runStats, ...more }
              return ctx.store.heartbeatRun(runId, runStats)
            }
            if (opts.final) {
              await recordStats({})
            }
            // Alive while planning and loading: `status` and `runs` call a silent run dead (run-liveness.ts).
            const heartbeat = setInterval(() => void ctx.store.heartbeatRun(runId).catch(() => {}), RUN_HEARTBEAT_MS)
            let code: number = EXIT.ERROR
            // The run row's status comes from the load, also when a final delta exits 4.
            let loadCode: number = EXIT.ERROR
            let failure: string | undefined
            let loadError: string | undefined
            const removeQuitHook = stopper.onQuit(() => ctx.store.finishRun(runId, 'interrupted', undefined, 'quit at once by a second signal'))
            try {
              const progress = createPlanProgress(ctx.config.target.quota, logger)
              const summary = await planFromSource(ctx, {
                mode: opts.delta ? 'delta' : 'full',
                detectDeletes: opts.detectDeletes === true,
                // The final delta always reconciles: no row the ledger never planned is left behind.
                reconcileKeys: opts.reconcileKeys === true || opts.final === true,
                logger,
                signal: stopper.signal,
                onPage: progress.onPage,
              }).finally(() => progress.stop())
              ;(jsonRequested() ? process.stderr : process.stdout).write(formatPlanSummary(summary))
              // The cutover time: when the final read's snapshot began (the source's clock).
              const started = opts.final ? { cutover: cutoverStarted(summary.snapshotAt) } : {}
              await recordStats({ ...started, plan: summary })
              const loaded = await runLoaderWithOutcome(ctx, 'load', logger, stopper)
              if (loaded.outcome.updates !== undefined) {
                await recordStats({ updateLane: loaded.outcome.updates.counters })
              }
              code = loaded.code
              loadCode = code
              loadError = loaded.outcome.error?.message
              const cutover =
                opts.final && (code === EXIT.OK || code === EXIT.REJECTED)
                  ? await checkSourceAfterFinal(ctx, summary.snapshotAt, code, logger, { periodMs: opts.quietPeriod ?? 0, signal: stopper.signal })
                  : undefined
              if (cutover) {
                await recordStats({ cutover: cutover.record })
                code = cutover.code
              }
              printSummary(
                buildSummary({
                  exitCode: code,
                  interrupted: stoppedBy(stopper) !== undefined,
                  stats: loaded.outcome.stats,
                  ...(cutover ? { cutover: cutover.record } : {}),
                  updates: loaded.updates,
                  ...(loaded.outcome.error ? { error: loaded.outcome.error.message } : {}),
                }),
              )
              ended = code
              return code
            } catch (err) {
              failure = err instanceof Error ? err.message.split('\n')[0] : String(err)
              throw err
            } finally {
              clearInterval(heartbeat)
              removeQuitHook()
              const status = runStatusOf(loadCode, stoppedBy(stopper) !== undefined)
              await ctx.store.finishRun(runId, status, undefined, failure)
              await notifyRunEnd(ctx, logger, {
                command: opts.delta ? (opts.final ? 'run --delta --final' : 'run --delta') : 'run',
                runId,
                status: code === EXIT.SOURCE_CHANGING ? 'source-changing' : status,
                exitCode: code,
                startedAt,
                final: opts.final === true,
                ...((failure ?? loadError) !== undefined ? { error: failure ?? loadError } : {}),
                ...(rejectedBefore !== undefined ? { rejectedBefore } : {}),
              })
            }
          } finally {
            // Best effort: the command's own error matters more than a failed clean-up.
            await forgetJobIfPhantom(ctx, admitted, ended)
              .catch(() => undefined)
              .finally(() => ctx.close())
          }
        })
        // A signal that ended the work before its summary: say so (one JSON object with --json).
        printSummaryIfMissing(code, true)
        process.exitCode = code
      },
    )
}

/** The run row's status: a signal's stop wins over whatever the interrupted phase returned. */
function runStatusOf(code: number, interrupted: boolean): Exclude<RunStatus, 'running'> {
  if (interrupted) {
    return 'interrupted'
  }
  return code === EXIT.OK ? 'succeeded' : code === EXIT.REJECTED ? 'rejected' : 'failed'
}
