import { type Command, Option } from 'commander'
import type { Logger } from 'pino'

import { runJob } from '../../job/job-run.ts'
import type { LedgerContext } from '../../job/ledger-context.ts'
import { createLogger } from '../../logger.ts'
import type { LegacyEntity } from '../../model/records.ts'
import { formatPlanSummary } from '../../plan/format-plan-summary.ts'
import { CliError } from '../cli-error.ts'
import { buildSummary, jsonRequested, noteSummary, printSummary, printSummaryIfMissing, startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { admitJob, type AdmittedJob, forgetJobIfPhantom } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { jsonOption } from '../options.ts'
import { createPlanProgress } from '../progress-drawer.ts'
import { loaderExit, openLoaderDisplay } from '../run-loader-command.ts'
import { notifyRunEnd, rejectedNow } from '../run-notify.ts'
import { runStoppable, stoppedBy, type Stopper } from '../signals.ts'
import { judgeTargetAccess } from '../target-preflight.ts'
import { UsageError } from '../usage-error.ts'
import { parseEntityList, refuseWhileRunLive } from './cursors.ts'
import { addLoaderOptions, loaderContextOptions, type LoaderFlags, NEW_JOB_FLAG_HELP, NEW_JOB_OPTION_HELP } from './load.ts'
import { parseQuietPeriod, requireDeltaForFinal } from './run-final.ts'

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
            ended = await runCommand(ctx, opts, reread, logger, stopper)
            return ended
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

type RunFlags = LoaderFlags & { delta?: boolean; detectDeletes?: boolean; reconcileKeys?: boolean; final?: boolean; quietPeriod?: number }

/**
 * The job's run (src/job/job-run.ts owns it and its one run row) as the command shows it: the
 * plan's progress and summary, the loader's progress, the exit code, the summary, the hooks.
 */
async function runCommand(ctx: LedgerContext, opts: RunFlags, reread: LegacyEntity[] | undefined, logger: Logger, stopper: Stopper): Promise<number> {
  let startedAt = Date.now()
  const rejectedBefore = await rejectedNow(ctx)
  let runId: number | undefined
  let code: number = EXIT.ERROR
  let status = 'failed'
  let failure: string | undefined
  const progress = createPlanProgress(ctx.config.target.quota, logger)
  let planning = true
  const planEnded = () => {
    if (planning) {
      planning = false
      progress.stop()
    }
  }
  try {
    const run = await runJob(ctx, {
      read: opts.delta ? 'delta' : 'full',
      detectDeletes: opts.detectDeletes === true,
      reconcileKeys: opts.reconcileKeys === true,
      ...(opts.final ? { final: { quietPeriodMs: opts.quietPeriod ?? 0, refusal: (message: string) => new CliError(message, EXIT.USAGE) } } : {}),
      role: 'run',
      logger,
      signal: stopper.signal,
      // Before any source read: a key the platform refuses would otherwise be found only after the whole extraction.
      judgeTarget: (access) => judgeTargetAccess(ctx, access, logger),
      beforeRow: async () => {
        if (reread) {
          await refuseWhileRunLive(ctx.store, ctx.jobId, 'not rereading')
          await ctx.store.resetCursors(ctx.jobId, reread)
          logger.info(
            { entities: reread },
            `reading ${reread.join(', ')} again from the first row; changes of loaded items go through the update lane`,
          )
        }
      },
      onPlanPage: progress.onPage,
      planned: async (summary) => {
        planEnded()
        ;(jsonRequested() ? process.stderr : process.stdout).write(formatPlanSummary(summary))
        return undefined
      },
      display: () => openLoaderDisplay(ctx, logger, stopper),
      onQuit: (hook) => stopper.onQuit(hook),
      onRow: (id) => {
        startedAt = Date.now()
        runId = id
        noteSummary({ runId: id })
      },
    })
    status = run.status
    if (run.loaded === undefined) {
      // Only a fleet tenant's judgement ends a run before its lanes without an error.
      throw new Error(run.failedBecause ?? 'the run ended before its load')
    }
    const loaded = await loaderExit(ctx, 'load', run.loaded, run.runId, logger)
    code = run.cutover?.sourceStillChanging ? EXIT.SOURCE_CHANGING : loaded.code
    failure = run.loaded.error?.message
    printSummary(
      buildSummary({
        exitCode: code,
        interrupted: stoppedBy(stopper) !== undefined,
        stats: run.loaded.stats,
        ...(run.cutover ? { cutover: run.cutover } : {}),
        updates: loaded.updates,
        ...(run.loaded.error ? { error: run.loaded.error.message } : {}),
      }),
    )
    return code
  } catch (err) {
    failure = err instanceof Error ? err.message.split('\n')[0] : String(err)
    status = stoppedBy(stopper) !== undefined ? 'interrupted' : 'failed'
    throw err
  } finally {
    planEnded()
    if (runId !== undefined) {
      await notifyRunEnd(ctx, logger, {
        command: opts.delta ? (opts.final ? 'run --delta --final' : 'run --delta') : 'run',
        runId,
        status: code === EXIT.SOURCE_CHANGING ? 'source-changing' : status,
        exitCode: code,
        startedAt,
        final: opts.final === true,
        ...(failure !== undefined ? { error: failure } : {}),
        ...(rejectedBefore !== undefined ? { rejectedBefore } : {}),
      })
    }
  }
}
