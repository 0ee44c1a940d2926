import type { Command } from 'commander'
import { runLoaderCommand } from '../run-loader-command.ts'
import { openCommandContext } from '../open-command-context.ts'
import { createLogger } from '../../logger.ts'
import { planFromSource } from '../../job/plan-from-source.ts'
import { formatPlanSummary } from '../../plan/format-plan-summary.ts'
import type { RunStatus } from '../../state/schema.ts'
import { EXIT } from '../exit-codes.ts'
import { runStoppable, stoppedBy } from '../signals.ts'
import { addLoaderOptions, loaderContextOptions, type LoaderFlags } from './load.ts'

/** `chatferry run`: extract → map → validate → plan → load, resuming wherever an earlier run stopped. */
export function registerRunCommand(program: Command): void {
  addLoaderOptions(
    program
      .command('run')
      .description(
        'migrate: read the legacy source, map and plan every record into the ledger, then load at the quota.\n' +
          'Rerun the same command after any failure: it resumes from the ledger.\n' +
          'Exit 0: all done or skipped; 3: finished with rejected items; 1: stopped by an error or by SIGINT/SIGTERM (rerun resumes); 2: usage/config error.',
      )
      .option('--delta', 'read only rows added or changed since the last completed read (for catch-up runs before cutover)'),
  ).action(async (opts: LoaderFlags & { delta?: boolean }) => {
    const logger = createLogger()
    process.exitCode = await runStoppable(logger, 'the page being planned, then closing the source read', async (stopper) => {
      const ctx = await openCommandContext(loaderContextOptions(opts))
      try {
        // The run row references the job: a first run on a fresh ledger must create the job first.
        await ctx.store.ensureJob(ctx.jobId, ctx.config.target.appId)
        const runId = await ctx.store.startRun(ctx.jobId, opts.delta ? 'delta' : 'run', `pid:${process.pid}`)
        let code: number = EXIT.ERROR
        try {
          const summary = await planFromSource(ctx, { mode: opts.delta ? 'delta' : 'full', logger, signal: stopper.signal })
          process.stdout.write(formatPlanSummary(summary))
          await ctx.store.heartbeatRun(runId, { plan: summary })
          code = await runLoaderCommand(ctx, 'load', logger, stopper)
          return code
        } finally {
          await ctx.store.finishRun(runId, runStatusOf(code, stoppedBy(stopper) !== undefined))
        }
      } finally {
        await ctx.close()
      }
    })
  })
}

/** The run row's status: a signal's stop wins over whatever the interrupted phase returned. */
function runStatusOf(code: number, interrupted: boolean): Exclude<RunStatus, 'running'> {
  if (interrupted) return 'interrupted'
  return code === EXIT.OK ? 'succeeded' : code === EXIT.REJECTED ? 'rejected' : 'failed'
}
