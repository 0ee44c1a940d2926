import type { Command } from 'commander'

import { ChatferryError } from '../../errors.ts'
import { scheduleQueueName } from '../../job/job-schedule.ts'
import { deadRunReason } from '../../job/run-liveness.ts'
import { deleteBossQueues, legacyLoadQueueName } from '../../job/schedule-boss.ts'
import type { PurgedRows } from '../../state/store.ts'
import { CliError } from '../cli-error.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { ledgerPlace, requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption } from '../options.ts'

/** `chatferry purge`: deletes everything the ledger holds for a finished job (its personal data). */
export function registerPurgeCommand(program: Command): void {
  const purge = program
    .command('purge')
    .summary('delete everything the ledger holds for a finished job (message bodies and other personal data)')
    .description(
      'Delete everything the ledger holds for one job, for good: its items with their payloads (message bodies, names, ' +
        'e-mail addresses), batches, cursors, runs, plan and verify reports, id map, and its schedule (with its pg-boss queue). Refused while a ' +
        'run of the job is live, and without --yes. Nothing on the platform changes. Needs no API key or source password.',
    )
  withHelp(purge, {
    exits: [
      [0, 'purged; what was removed is printed'],
      [1, 'the ledger could not be written; run it again'],
      [2, 'usage or configuration error, unknown job, no --yes, or a run of the job is live; nothing was deleted'],
    ],
    examples: [
      ['purge --job acme-chat --yes', 'after the cutover: remove the job and its personal data from the ledger'],
      ['purge --job rehearsal-3 --yes --json', 'remove a rehearsal job; print what was removed as JSON'],
    ],
  })
  purge
    .addOption(configOption())
    .requiredOption('--job <id>', 'the job to delete (named explicitly: no default)')
    .option('--yes', 'confirm: delete the job and everything the ledger holds for it')
    .option('--json', 'print what was removed as one JSON object')
    .action(async (opts: { config: string; job: string; yes?: boolean; json?: boolean }) => {
      if (!opts.yes) {
        throw new CliError(
          `purge deletes every item, batch, cursor, run, report and id mapping of job ${opts.job} for good; add --yes to do it`,
          EXIT.USAGE,
        )
      }
      let ctx
      try {
        ctx = await openCommandContext({ config: opts.config, job: opts.job, ledgerOnly: true })
      } catch (err) {
        if (err instanceof ChatferryError && err.code === 'CHECKPOINT_CONFLICT') {
          throw new CliError(`not purging job ${opts.job}: ${err.message}`, EXIT.USAGE)
        }
        throw err
      }
      try {
        await requireKnownJob(ctx)
        const now = Date.now()
        const live = (await ctx.store.listRuns(ctx.jobId, 1000)).filter((r) => r.status === 'running' && deadRunReason(r, now) === undefined)
        if (live.length > 0) {
          throw new CliError(
            `not purging job ${ctx.jobId}: ${live
              .map((r) => `run #${r.id} (${r.mode}, ${r.owner ?? 'unknown owner'}, last heartbeat ${r.heartbeatAt.toISOString()})`)
              .join(', ')} is live; stop it first`,
            EXIT.USAGE,
          )
        }
        // The queues first: should the rows' deletion fail after them, the job is still known and purge runs again.
        // The job's recurring run (`chatferry schedule`) goes with its queue; an old ledger's load queue too.
        const schedule = scheduleQueueName(ctx.jobId)
        const legacy = legacyLoadQueueName(ctx.jobId)
        const deleted = await deleteBossQueues(ctx.store.sessions, [legacy, schedule], ctx.config.state.url)
        const queue = deleted.includes(legacy) ? legacy : null
        const scheduled = deleted.includes(schedule) ? schedule : null
        const rows = await ctx.store.purgeJob(ctx.jobId)
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ jobId: ctx.jobId, removed: rows, queue, schedule: scheduled })}\n`)
        } else {
          process.stdout.write(`purged job ${ctx.jobId} from ${ledgerPlace(ctx)}: ${describeRows(rows)}`)
          process.stdout.write(queue ? `; pg-boss queue ${queue} deleted` : '; no pg-boss queue')
          process.stdout.write(scheduled ? `; its schedule and queue ${scheduled} deleted\n` : '\n')
        }
      } finally {
        await ctx.close()
      }
    })
}

function describeRows(rows: PurgedRows): string {
  const names: Record<keyof PurgedRows, string> = {
    items: 'items',
    updates: 'update intents',
    batches: 'batches',
    cursors: 'cursors',
    runs: 'runs',
    reports: 'reports',
    idMap: 'id mappings',
    workers: 'worker rows',
    acceptedRejects: 'accepted rejects',
    jobs: 'job row',
  }
  return (Object.keys(names) as (keyof PurgedRows)[]).map((k) => `${rows[k]} ${names[k]}`).join(', ')
}
