import { configOption } from '../options.ts'
import { Option, type Command } from 'commander'
import { ENTITIES, type Entity } from '../../target/schemas.ts'
import { openCommandContext } from '../open-command-context.ts'

/** `chatferry retry-rejected`: plans rejected items again, e.g. after fixing their cause. */
export function registerRetryRejectedCommand(program: Command): void {
  program
    .command('retry-rejected')
    .description('plan rejected items again (all, or one code); the next load/run sends them')
    .addOption(configOption())
    .option('--job <id>', 'ledger job id (defaults to $CHATFERRY_JOB_ID, then job.id, then the target app id)')
    .option('--code <code>', 'only items rejected with this code')
    .addOption(new Option('--entity <entity>', 'only this entity').choices(ENTITIES))
    .action(async (opts: { config: string; job?: string; code?: string; entity?: Entity }) => {
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        const n = await ctx.store.retryRejected(ctx.jobId, {
          ...(opts.code !== undefined ? { code: opts.code } : {}),
          ...(opts.entity !== undefined ? { entity: opts.entity } : {}),
        })
        process.stdout.write(`${n} rejected item(s) planned again; run chatferry load to send them\n`)
      } finally {
        await ctx.close()
      }
    })
}
