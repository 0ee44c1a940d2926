import type { Command } from 'commander'
import { UsageError } from '../usage-error.ts'
import { openCommandContext } from '../open-command-context.ts'
import { runLoaderCommand } from '../run-loader-command.ts'
import { createLogger } from '../../logger.ts'
import { EXIT } from '../exit-codes.ts'
import { runStoppable } from '../signals.ts'
import { requireKnownJob } from '../job-guard.ts'
import { requireTargetAccess } from '../target-preflight.ts'
import { addLoaderOptions, loaderContextOptions, type LoaderFlags } from './load.ts'

/** `chatferry worker`: serves the job's load queue until stopped (SIGINT/SIGTERM); run as many as you like. */
export function registerWorkerCommand(program: Command): void {
  addLoaderOptions(
    program
      .command('worker')
      .description(
        "take batches from the job's load queue (pg-boss in the ledger's Postgres) until stopped; any number of workers,\n" +
          'on any number of machines sharing state.url, share the app quota. Needs state.url (not the embedded store).',
      ),
  ).action(async (opts: LoaderFlags) => {
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
          return await runLoaderCommand(ctx, 'worker', logger, stopper)
        } finally {
          await ctx.close()
        }
      },
      EXIT.OK,
    )
  })
}
