import { type Command, Option } from 'commander'

import type { RejectRecord } from '../../state/store.ts'
import { ENTITIES, type Entity } from '../../target/schemas.ts'
import { INVOCATION } from '../../version.ts'
import { CliError } from '../cli-error.ts'
import { buildSummary, noteSummary, printSummary, startSummary } from '../command-summary.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption, jsonOption } from '../options.ts'
import { JOB_OPTION_HELP } from './load.ts'

/** `chatferry retry-rejected`: plans rejected items again, e.g. after fixing their cause. */
export function registerRetryRejectedCommand(program: Command): void {
  const retry = program
    .command('retry-rejected')
    .summary('plan rejected items again after a fix; the next load sends them')
    .description('Plan rejected items again (all, or those of one code or entity), e.g. after fixing their cause; the next load or run sends them.')
  withHelp(retry, {
    exits: [
      [0, 'planned again (also when there were none)'],
      [1, 'the ledger could not be written'],
      [
        2,
        'usage or configuration error, unknown job; the selected rejects have no payload to send again (their source rows could not be mapped: the message says how to retry or accept them)',
      ],
    ],
    examples: [
      ['retry-rejected --code ERR_UID_NOT_FOUND', 'only the items rejected with that code'],
      ['retry-rejected --entity members --json', 'all rejected members; one JSON summary with the count'],
      ['retry-rejected --conflicts', 'the updates held back by a conflict, after setting changes.conflicts: source-wins'],
    ],
  })
  retry
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--code <code>', 'only items rejected with this code')
    .addOption(new Option('--entity <entity>', 'only this entity').choices(ENTITIES))
    .option(
      '--conflicts',
      'instead: plan again the updates held back because their item changed on the platform (status conflict); with changes.conflicts: source-wins the next load applies them, with report they are held back again',
    )
    .addOption(jsonOption('print one JSON summary object on stdout (status, exitCode, jobId, replanned, durationMs, entities)'))
    .action(async (opts: { config: string; job?: string; code?: string; entity?: Entity; conflicts?: boolean; json?: boolean }) => {
      startSummary('retry-rejected', opts.json === true)
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        noteSummary({ jobId: ctx.jobId })
        await requireKnownJob(ctx)
        const filter = { ...(opts.code !== undefined ? { code: opts.code } : {}), ...(opts.entity !== undefined ? { entity: opts.entity } : {}) }
        // Rejects without a payload (a row that could not be mapped) cannot be sent again: only a new read can retry them.
        const unsendable = opts.conflicts ? [] : (await ctx.store.listRejects(ctx.jobId, filter)).filter((r) => !r.resendable)
        const items = opts.conflicts ? 0 : await ctx.store.retryRejected(ctx.jobId, filter)
        // Rejected updates of loaded items too (or, with --conflicts, the held-back ones): the next load's update lane sends them.
        const updates = await ctx.store.updateLane.retryRejected(ctx.jobId, { ...filter, ...(opts.conflicts ? { held: 'conflict' as const } : {}) })
        const n = items + updates
        if (n === 0 && unsendable.length > 0) {
          throw new CliError(noPayload(unsendable, ctx.config.file, opts.code))
        }
        if (opts.json) {
          printSummary(buildSummary({ exitCode: EXIT.OK, stats: await ctx.store.entityStats(ctx.jobId), replanned: n }))
        } else {
          const what = opts.conflicts
            ? `${updates} update(s) held back by a conflict`
            : updates > 0
              ? `${items} rejected item(s) and ${updates} rejected update(s)`
              : `${items} rejected item(s)`
          process.stdout.write(`${what} planned again${n > 0 ? `; run \`${INVOCATION} load -c ${ctx.config.file}\` to send them` : ''}\n`)
          if (unsendable.length > 0) {
            process.stdout.write(`not planned: ${noPayload(unsendable, ctx.config.file, opts.code)}\n`)
          }
        }
      } finally {
        await ctx.close()
      }
    })
}

/**
 * Why rejects without a payload were not planned again, and the two ways out: fix the source rows
 * and read them again, or accept them.
 */
function noPayload(rejects: readonly RejectRecord[], file: string, code: string | undefined): string {
  const byEntity = new Map<string, number>()
  for (const r of rejects) {
    byEntity.set(r.entity, (byEntity.get(r.entity) ?? 0) + 1)
  }
  const codes = [...new Set(rejects.map((r) => r.code ?? '(no code)'))]
  return (
    `${rejects.length} reject(s) of ${codes.join(', ')} (${[...byEntity].map(([e, k]) => `${e} ${k}`).join(', ')}) have no payload to send again: ` +
    `their source rows could not be mapped (\`${INVOCATION} rejects -c ${file}\` gives each reason, e.g. ${rejects[0]?.legacyId}: ${rejects[0]?.message ?? '-'}); ` +
    `fix those rows in the source, then \`${INVOCATION} run --delta -c ${file}\` reads rows added or changed since the last read and plans them again; ` +
    `rows that stay as they are: \`${INVOCATION} accept-rejects${code !== undefined ? ` --code ${code}` : ' --all'} --reason '…' -c ${file}\``
  )
}
