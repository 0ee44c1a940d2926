import type { Command } from 'commander'

import { formatStatusTable } from '../../load/progress.ts'
import { formatUpdateTable } from '../../load/update-progress.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { readStatusFor } from '../ledger-read-context.ts'
import { describeHolder } from '../open-command-context.ts'
import { configOption } from '../options.ts'
import { formatStatusFiles } from '../status-files.ts'
import { statusSnapshot } from '../status-snapshot.ts'
import { formatStatusConflicts, formatStatusUpdates } from '../status-updates.ts'
import { JOB_OPTION_HELP } from './load.ts'

/** `chatferry status`: where the job stands, per entity. */
export function registerStatusCommand(program: Command): void {
  const status = program
    .command('status')
    .summary('where the job stands, per entity')
    .description(
      'Where the job stands, per entity: planned, in flight, done (created / already present), skipped, rejected, remaining, ' +
        'requests, 429s, rate vs quota, ETA at quota; the update lane per kind (planned, in flight, done, rejected, reported); the messages that will age out of the retention window before the load at the quota reaches them; ' +
        'and the last run (`interrupted` when its process died). Needs no API key ' +
        'or source password, and works while a run holds the embedded store (it asks that process).',
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
    .option(
      '--json',
      'print JSON: jobId, appId, quota, chatQuota, entities, the last runs, retentionEdge, updates (per entity and kind), updateLane (per kind), files (the files lane: planned, copied, failed, skipped, bytes, messages waiting on files)',
    )
    .action(async (opts: { config: string; job?: string; json?: boolean }) => {
      const ctx = await readStatusFor({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) }, { runs: 5, rejects: 0 })
      await requireKnownJob({ ...ctx, store: { listJobs: async () => ctx.readings.jobs } })
      const snap = statusSnapshot(ctx.readings, ctx.jobId, ctx.config)
      const { quota } = snap
      const { entities: report, runs, inFlightWhenDied: orphaned, retentionEdge, updates, updateLane } = snap
      if (opts.json) {
        process.stdout.write(`${JSON.stringify(snap, null, 2)}\n`)
      } else {
        process.stdout.write(
          `job ${ctx.jobId} → app ${ctx.config.target.appId} (quota ${quota.requestsPerMinute} requests/min × ${quota.itemsPerRequest} items)\n`,
        )
        process.stdout.write(`${formatStatusTable(report)}\n`)
        const accepted = report.reduce((n, e) => n + e.accepted, 0)
        if (accepted > 0) {
          process.stdout.write(`accepted rejects: ${accepted} (not counted as rejected; rejects --accepted lists them with who, when and why)\n`)
        }
        for (const line of [...formatStatusUpdates(updates), ...formatStatusConflicts(updates)]) {
          process.stdout.write(`${line}\n`)
        }
        if (updateLane.length > 0) {
          process.stdout.write(`update lane (chat interface, ${ctx.config.target.chatQuota.requestsPerMinute} requests/min):\n`)
          process.stdout.write(`${formatUpdateTable(updateLane)}\n`)
        }
        if (snap.files !== undefined) {
          process.stdout.write(`${formatStatusFiles(snap.files)}\n`)
        }
        if (retentionEdge.advice) {
          process.stdout.write(`WARNING retention edge: ${retentionEdge.advice}\n`)
        }
        const last = runs[0]
        if (last) {
          process.stdout.write(
            `last run: #${last.id} ${last.mode} ${last.status}, started ${last.startedAt.toISOString()}${last.error ? ` — ${last.error}` : ''}` +
              `${'died' in last ? ` — its process died: ${last.died}` : ''}\n`,
          )
        }
        if (orphaned > 0) {
          process.stdout.write(`in flight when it died: ${orphaned} items — they are sent again on the next run\n`)
        }
        if (ctx.holder) {
          process.stdout.write(`read through ${describeHolder(ctx.holder)}, which holds the embedded store\n`)
        }
      }
    })
}
