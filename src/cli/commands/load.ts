import { Command, InvalidArgumentError, Option } from 'commander'

import { createLogger } from '../../logger.ts'
import { buildSummary, noteSummary, printSummary, printSummaryIfMissing, startSummary } from '../command-summary.ts'
import { withHelp } from '../help.ts'
import { nothingPlanned, requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption, jsonOption } from '../options.ts'
import { runLoaderWithOutcome } from '../run-loader-command.ts'
import { runStoppable, stoppedBy } from '../signals.ts'
import { requireTargetAccess } from '../target-preflight.ts'

// InvalidArgumentError: commander reports it as a usage error (exit 2), naming the flag.
const int = (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n)) {
    throw new InvalidArgumentError(`expected an integer, got ${v}`)
  }
  return n
}

export const JOB_OPTION_HELP = 'ledger job id; must be a job of the ledger (default: $CHATFERRY_JOB_ID, else job.id, else the target app id)'

/** `--job` of the commands that may start a new job (`run`, `plan`). */
export const NEW_JOB_OPTION_HELP =
  'ledger job id; one the ledger does not hold needs --new-job while it holds others (default: $CHATFERRY_JOB_ID, else job.id, else the target app id)'

/** `--new-job` of `run` and `plan`. */
export const NEW_JOB_FLAG_HELP = 'start the job --job names although the ledger holds other jobs (a new job reads and sends the whole history)'

/** Flags shared by `load`, `run` and `worker`. */
export function addLoaderOptions(cmd: Command, jobHelp: string = JOB_OPTION_HELP): Command {
  return cmd
    .addOption(configOption())
    .option('--job <id>', jobHelp)
    .addOption(
      new Option(
        '--concurrency <n>',
        'batches in flight per process (default: $CHATFERRY_LOAD_CONCURRENCY, else load.concurrency, else 4)',
      ).argParser(int),
    )
    .addOption(
      new Option(
        '--lease-seconds <n>',
        'lease of a batch before another worker takes it over (default: $CHATFERRY_LOAD_LEASE_SECONDS, else load.leaseSeconds, else 120)',
      ).argParser(int),
    )
}

export interface LoaderFlags {
  config: string
  job?: string
  concurrency?: number
  leaseSeconds?: number
  json?: boolean
}

export function loaderContextOptions(opts: LoaderFlags) {
  return {
    config: opts.config,
    ...(opts.job !== undefined ? { job: opts.job } : {}),
    load: {
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      ...(opts.leaseSeconds !== undefined ? { leaseSeconds: opts.leaseSeconds } : {}),
    },
  }
}

/** `chatferry load`: drains the ledger into the platform (the part of `run` after planning). */
export function registerLoadCommand(program: Command): void {
  const load = addLoaderOptions(
    program
      .command('load')
      .summary('only the loading half: send the planned items at the quota')
      .description(
        'Send every planned item of the job to the platform at the quota; resumes where any earlier run stopped. ' +
          'Ends with a summary (one JSON object on stdout with --json).',
      ),
  )
  withHelp(load, {
    exits: [
      [0, 'every item done, or skipped by policy (also when nothing was left to send)'],
      [3, 'finished, some items rejected: chatferry rejects'],
      [1, 'stopped by an outage of the platform, or by SIGINT/SIGTERM (or the death of its parent): run the same command again, it resumes'],
      [
        2,
        'usage or configuration error; unknown job; nothing planned (the job has no items: run `chatferry run` first); the platform refused the API key',
      ],
    ],
    examples: [
      ['load', 'drain the job of ./chatferry.yaml'],
      ['load --job acme-chat --json', 'another job of the ledger; one JSON summary on stdout'],
      ['retry-rejected --code ERR_UID_NOT_FOUND && chatferry load', 'send the items rejected for that code again, after a fix'],
    ],
  })
  load
    .addOption(jsonOption('print one JSON summary object on stdout (status, exitCode, jobId, runId, durationMs, entities); logs stay on stderr'))
    .action(async (opts: LoaderFlags) => {
      startSummary('load', opts.json === true)
      const logger = createLogger()
      const code = await runStoppable(logger, 'the batches in flight', async (stopper) => {
        const ctx = await openCommandContext(loaderContextOptions(opts))
        try {
          noteSummary({ jobId: ctx.jobId })
          await requireKnownJob(ctx, { nothingPlanned: true })
          if (!(await ctx.store.hasItems(ctx.jobId))) {
            throw nothingPlanned(ctx)
          }
          await requireTargetAccess(ctx, logger, stopper.signal)
          const { code, outcome, runId, updates } = await runLoaderWithOutcome(ctx, 'load', logger, stopper)
          if (runId !== undefined) {
            noteSummary({ runId })
          }
          printSummary(
            buildSummary({
              exitCode: code,
              interrupted: stoppedBy(stopper) !== undefined,
              stats: outcome.stats,
              updates,
              ...(outcome.error ? { error: outcome.error.message } : {}),
            }),
          )
          return code
        } finally {
          await ctx.close()
        }
      })
      // A signal that ended the work before its summary: say so (one JSON object with --json).
      printSummaryIfMissing(code, true)
      process.exitCode = code
    })
}
