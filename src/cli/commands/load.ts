import { configOption } from '../options.ts'
import { Command, Option } from 'commander'
import { openCommandContext } from '../open-command-context.ts'
import { runLoaderCommand } from '../run-loader-command.ts'
import { createLogger } from '../../logger.ts'
import { runStoppable } from '../signals.ts'

const int = (v: string) => {
  const n = Number(v)
  if (!Number.isInteger(n)) throw new Error(`expected an integer, got ${v}`)
  return n
}

/** Flags shared by `load` and `worker`. */
export function addLoaderOptions(cmd: Command): Command {
  return cmd
    .addOption(configOption())
    .option('--job <id>', 'ledger job id (defaults to $CHATFERRY_JOB_ID, then job.id, then the target app id)')
    .addOption(new Option('--concurrency <n>', 'batches in flight per process (defaults to $CHATFERRY_LOAD_CONCURRENCY, then 4)').argParser(int))
    .addOption(new Option('--lease-seconds <n>', 'lease of a batch before another worker takes it over (defaults to $CHATFERRY_LOAD_LEASE_SECONDS, then 120)').argParser(int))
}

export interface LoaderFlags {
  config: string
  job?: string
  concurrency?: number
  leaseSeconds?: number
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
          'Exit 0: all done or skipped; 3: finished with rejected items; 1: stopped by an error or by SIGINT/SIGTERM (rerun resumes); 2: usage/config error.',
      ),
  ).action(async (opts: LoaderFlags) => {
    const logger = createLogger()
    process.exitCode = await runStoppable(logger, 'the batches in flight', async (stopper) => {
      const ctx = await openCommandContext(loaderContextOptions(opts))
      try {
        return await runLoaderCommand(ctx, 'load', logger, stopper)
      } finally {
        await ctx.close()
      }
    })
  })
}
