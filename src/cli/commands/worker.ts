import type { Command } from 'commander'
import { UsageError } from '../../load/usage-error.ts'
import { openLedgerContext } from '../../load/context.ts'
import { runLoaderCommand } from '../../load/command-support.ts'
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
    const ctx = await openLedgerContext(loaderContextOptions(opts))
    try {
      if (ctx.store.embedded) {
        throw new UsageError('workers need a shared Postgres ledger: set state.url in the configuration (the embedded store serves one process)')
      }
      process.exitCode = await runLoaderCommand(ctx, 'worker')
    } finally {
      await ctx.close()
    }
  })
}
