import type { Command } from 'commander'

import { buildReport, formatStatusTable } from '../../load/progress.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption } from '../options.ts'
import { statusRetentionEdge } from '../status-retention-edge.ts'
import { JOB_OPTION_HELP } from './load.ts'

/** `chatferry status`: where the job stands, per entity. */
export function registerStatusCommand(program: Command): void {
  const status = program
    .command('status')
    .summary('where the job stands, per entity')
    .description(
      'Where the job stands, per entity: planned, in flight, done (created / already present), skipped, rejected, remaining, ' +
        'requests, 429s, rate vs quota, ETA at quota; the messages that will age out of the retention window before the load at the quota reaches them; and the last run.',
    )
  withHelp(status, {
    exits: [
      [0, 'printed'],
      [1, 'the ledger could not be read'],
      [2, 'usage or configuration error, unknown job'],
    ],
    examples: [
      ['status', 'the job of ./chatferry.yaml'],
      ['status --job acme-chat --json', 'another job of the ledger, as JSON'],
    ],
  })
  status
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--json', 'print JSON: jobId, appId, quota, entities, the last runs, retentionEdge')
    .action(async (opts: { config: string; job?: string; json?: boolean }) => {
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        await requireKnownJob(ctx)
        const { quota } = ctx.config.target
        const report = buildReport(await ctx.store.entityStats(ctx.jobId), quota)
        const runs = await ctx.store.listRuns(ctx.jobId, 5)
        const retentionEdge = await statusRetentionEdge(ctx.store, ctx.jobId, ctx.config, report, Date.now())
        if (opts.json) {
          process.stdout.write(
            `${JSON.stringify({ jobId: ctx.jobId, appId: ctx.config.target.appId, quota, entities: report, runs, retentionEdge }, null, 2)}\n`,
          )
        } else {
          process.stdout.write(
            `job ${ctx.jobId} → app ${ctx.config.target.appId} (quota ${quota.requestsPerMinute} requests/min × ${quota.itemsPerRequest} items)\n`,
          )
          process.stdout.write(`${formatStatusTable(report)}\n`)
          if (retentionEdge.advice) {
            process.stdout.write(`WARNING retention edge: ${retentionEdge.advice}\n`)
          }
          const last = runs[0]
          if (last) {
            process.stdout.write(
              `last run: #${last.id} ${last.mode} ${last.status}, started ${last.startedAt.toISOString()}${last.error ? ` — ${last.error}` : ''}\n`,
            )
          }
        }
      } finally {
        await ctx.close()
      }
    })
}
