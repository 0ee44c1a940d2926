import { configOption, jsonOption } from '../options.ts'
import { Command, Option } from 'commander'
import { openCommandContext } from '../open-command-context.ts'
import { runLoaderWithOutcome } from '../run-loader-command.ts'
import { createLogger } from '../../logger.ts'
import { runStoppable, stoppedBy } from '../signals.ts'
import { nothingPlanned, requireKnownJob } from '../job-guard.ts'
import { requireTargetAccess } from '../target-preflight.ts'
import { buildSummary, noteSummary, printSummary, startSummary } from '../command-summary.ts'

const int = (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n)) throw new Error(`expected an integer, got ${v}`)
  return n
}

export const JOB_OPTION_HELP = 'ledger job id (default: $CHATFERRY_JOB_ID, then job.id, then the target app id); must be a job of the ledger'

/** Flags shared by `load`, `run` and `worker`. */
export function addLoaderOptions(cmd: Command): Command {
  return cmd
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .addOption(new Option('--concurrency <n>', 'batches in flight per process (default: $CHATFERRY_LOAD_CONCURRENCY, then 4)').argParser(int))
    .addOption(
      new Option('--lease-seconds <n>', 'lease of a batch before another worker takes it over (default: $CHATFERRY_LOAD_LEASE_SECONDS, then 120)').argParser(int),
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
  addLoaderOptions(
    program
      .command('load')
      .description(
        'send every planned item of the job to the platform at the quota; resumes where any earlier run stopped.\n' +
          'Exit 0: all done or skipped; 3: finished with rejected items; 1: stopped by an outage or by SIGINT/SIGTERM (rerun resumes);\n' +
          '2: usage/config error, unknown job, nothing planned (run `chatferry run` first), or the platform refused the API key.',
      ),
  )
    .addOption(jsonOption('print one JSON summary object on stdout (status, exitCode, jobId, runId, durationMs, entities); logs stay on stderr'))
    .action(async (opts: LoaderFlags) => {
      startSummary('load', opts.json === true)
      const logger = createLogger()
      process.exitCode = await runStoppable(logger, 'the batches in flight', async (stopper) => {
        const ctx = await openCommandContext(loaderContextOptions(opts))
        try {
          noteSummary({ jobId: ctx.jobId })
          await requireKnownJob(ctx, { nothingPlanned: true })
          const before = await ctx.store.entityStats(ctx.jobId)
          if (before.reduce((a, s) => a + s.total, 0) === 0) throw nothingPlanned(ctx)
          await requireTargetAccess(ctx, logger, stopper.signal)
          const { code, outcome, runId } = await runLoaderWithOutcome(ctx, 'load', logger, stopper)
          if (runId !== undefined) noteSummary({ runId })
          printSummary(buildSummary({ exitCode: code, interrupted: stoppedBy(stopper) !== undefined, stats: outcome.stats }))
          return code
        } finally {
          await ctx.close()
        }
      })
    })
}
