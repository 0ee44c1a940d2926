import type { Command } from 'commander'

import { openScheduler } from '../../job/job-schedule.ts'
import { createLogger } from '../../logger.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { runLoaderCommand } from '../run-loader-command.ts'
import { serveSchedule } from '../scheduled-run.ts'
import { runStoppable } from '../signals.ts'
import { requireTargetAccess } from '../target-preflight.ts'
import { UsageError } from '../usage-error.ts'
import { addLoaderOptions, loaderContextOptions, type LoaderFlags } from './load.ts'

/** `chatferry worker`: serves the job's load queue until stopped (SIGINT/SIGTERM); run as many as you like. */
export function registerWorkerCommand(program: Command): void {
  const worker = addLoaderOptions(
    program
      .command('worker')
      .summary("serve the job's load until stopped (needs state.url)")
      .description(
        "Claim the job's batches and updates from the ledger (leased, in the ledger's Postgres) until stopped; any number of workers, " +
          'on any number of machines sharing state.url, share the app quota. Needs state.url (not the embedded store). ' +
          "A job that exists but has no items yet is waited for (a run may be planning it). Workers also run the job's schedule " +
          '(chatferry schedule): each trigger runs `chatferry run [--delta]` for the job, skipped while a run of the job is going.',
      ),
  )
  withHelp(worker, {
    exits: [
      [0, 'stopped by SIGINT/SIGTERM, or by the death of its parent: how a worker is meant to stop'],
      [1, 'stopped by an error (platform outage beyond load.giveUpAfterMs)'],
      [2, 'usage or configuration error; no state.url; unknown job, or the configured job never planned; the platform refused the API key'],
    ],
    examples: [
      ['worker -c shared.yaml', 'one more loader on this machine for the job of shared.yaml'],
      ['worker --job acme-chat --concurrency 2', 'another job of the ledger, two batches in flight'],
    ],
  })
  worker.action(async (opts: LoaderFlags) => {
    const logger = createLogger()
    // A signal is how a worker is meant to stop (README: "until SIGINT/SIGTERM"): exit 0.
    process.exitCode = await runStoppable(
      logger,
      'the batches in flight',
      async (stopper) => {
        const ctx = await openCommandContext(loaderContextOptions(opts))
        try {
          if (ctx.store.embedded) {
            throw new UsageError('workers need a shared Postgres ledger: set state.url in the configuration (the embedded store serves one process)')
          }
          // A job that exists but has no items yet is fine: a `run` may be planning it right now.
          await requireKnownJob(ctx, { nothingPlanned: true })
          await requireTargetAccess(ctx, logger, stopper.signal)
          // The job's schedule (`chatferry schedule`): this worker takes part in the cron pass and runs triggers.
          const scheduler = await openScheduler(ctx.store.sessions, ctx.config.state.url as string, ctx.jobId, true, (err) =>
            logger.warn({ err: err.message }, 'pg-boss (schedules)'),
          )
          const stopSchedule = await serveSchedule(scheduler, ctx, logger)
          try {
            return await runLoaderCommand(ctx, 'worker', logger, stopper)
          } finally {
            await stopSchedule()
          }
        } finally {
          await ctx.close()
        }
      },
      EXIT.OK,
    )
  })
}
