import type { Command } from 'commander'

import { closestName } from '../../did-you-mean.ts'
import { deadRunReason } from '../../job/run-liveness.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../../model/index.ts'
import type { CursorRow, LedgerStore } from '../../state/index.ts'
import { INVOCATION } from '../../version.ts'
import { CliError } from '../cli-error.ts'
import { EXIT } from '../exit-codes.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption, jsonOption, printTable } from '../options.ts'
import { UsageError } from '../usage-error.ts'
import { JOB_OPTION_HELP } from './load.ts'

/**
 * `chatferry cursors` and `chatferry cursors reset`: where each entity's read stands (its saved key,
 * whether the read completed, the watermark the next delta starts from), and forgetting it per
 * entity, with --yes, like the state commands of ETL tools: the next `run` reads the entity again
 * from its first row and compares every row with what the ledger loaded (a policy change reaches
 * the platform through the update lane; `run --reread` does both in one command).
 */
export function registerCursorsCommand(program: Command): void {
  const cursors = program
    .command('cursors')
    .summary("list each entity's read cursor and watermark (`cursors list`, the default); `cursors reset` to read entities again")
  withHelp(cursors, {
    exits: [
      [0, 'listed, or reset'],
      [2, 'usage or configuration error, unknown job or entity, reset without --yes, or a run of the job is live'],
    ],
    examples: [
      ['cursors', "the job's cursors and watermarks (cursors list)"],
      ['cursors reset --entity messages --yes', 'the next run reads every message again'],
      ['run --reread messages', 'both in one command: reset, read again, update loaded items'],
    ],
  })
  const list = cursors
    .command('list', { isDefault: true })
    .summary("each entity's read cursor and watermark")
    .description(
      "List where each entity's read stands: not started, in progress (the last key read), or complete; and its watermark " +
        '(the newest change time read: `run --delta` reads rows changed since it, less delta.lookbackSeconds). Needs only the ledger.',
    )
  withHelp(list, {
    exits: [
      [0, 'listed'],
      [2, 'usage or configuration error, or a job the ledger does not hold'],
    ],
    examples: [
      ['cursors', "the job's cursors and watermarks"],
      ['cursors reset --entity messages --yes', 'the next run reads every message again (after a policy change)'],
    ],
  })
  list
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .addOption(jsonOption('print one JSON object per entity (entity, state, cursor, watermark, updatedAt)'))
    .action(async (opts: { config: string; job?: string; json?: boolean }) => {
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}), ledgerOnly: true })
      try {
        await requireKnownJob(ctx)
        const rows = await ctx.store.listCursors(ctx.jobId)
        const byEntity = new Map(rows.map((r) => [r.entity, r]))
        if (opts.json) {
          for (const entity of LEGACY_ENTITIES) {
            const r = byEntity.get(entity)
            process.stdout.write(
              `${JSON.stringify({ entity, state: stateOf(r), cursor: r?.cursor ?? null, watermark: watermarkIso(r), updatedAt: r?.updatedAt.toISOString() ?? null })}\n`,
            )
          }
          return
        }
        printTable([
          ['ENTITY', 'READ', 'WATERMARK', 'SAVED'],
          ...LEGACY_ENTITIES.map((entity) => {
            const r = byEntity.get(entity)
            return [entity, describeRead(r), watermarkIso(r) ?? '-', r?.updatedAt.toISOString() ?? '-']
          }),
        ])
      } finally {
        await ctx.close()
      }
    })

  const reset = cursors
    .command('reset')
    .summary("forget entities' cursors and watermarks: the next run reads them again from the first row")
    .description(
      'Delete the read cursor and watermark of the entities named: the next `run` reads each again from its first row, in one ' +
        'snapshot, and compares every row with the item the ledger holds. Items stay; a loaded item whose mapping changed (a ' +
        'policy change, say longText: truncate) gets its update through the update lane, and a part of a split message its ' +
        'new mapping no longer has is deleted from the platform. Refused without --yes and while a run of the job is live.',
    )
  withHelp(reset, {
    exits: [
      [0, 'reset; the summary names the command that reads the entities again'],
      [2, 'usage or configuration error, unknown job or entity, no --yes (nothing reset), or a run of the job is live'],
    ],
    examples: [
      ['cursors reset --entity messages --yes', 'then `run`: every message is read again and compared'],
      ['cursors reset --entity users,groups --yes', 'several entities'],
    ],
  })
  reset
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .requiredOption('--entity <list>', `the entities whose read starts over, comma-separated (${LEGACY_ENTITIES.join(', ')}), or all`)
    .option('--yes', 'confirm: forget these cursors and watermarks')
    .addOption(jsonOption('print one JSON object (jobId, reset: the entities, before: their cursors)'))
    .action(async (opts: { config: string; job?: string; entity: string; yes?: boolean; json?: boolean }) => {
      const entities = parseEntityList(opts.entity, '--entity')
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}), ledgerOnly: true })
      try {
        await requireKnownJob(ctx)
        const before = (await ctx.store.listCursors(ctx.jobId)).filter((r) => (entities as readonly string[]).includes(r.entity))
        if (!opts.yes) {
          throw new CliError(
            `cursors reset forgets where the read of ${entities.join(', ')} stands (${before.map((r) => `${r.entity}: ${describeRead(r)}`).join('; ') || 'nothing saved'}); ` +
              `the next run reads ${entities.length === 1 ? 'it' : 'them'} again from the first row; add --yes to do it`,
            EXIT.USAGE,
          )
        }
        await refuseWhileRunLive(ctx.store, ctx.jobId)
        const done = await ctx.store.resetCursors(ctx.jobId, entities)
        if (opts.json) {
          process.stdout.write(`${JSON.stringify({ jobId: ctx.jobId, reset: done, before })}\n`)
          return
        }
        process.stdout.write(
          `reset the read of ${entities.join(', ')} of job ${ctx.jobId}${done.length < entities.length ? ` (${entities.filter((e) => !done.includes(e)).join(', ')} had no cursor)` : ''}; ` +
            `\`${INVOCATION} run -c ${ctx.config.file}\` reads ${entities.length === 1 ? 'it' : 'them'} again and sends what changed through the update lane\n`,
        )
      } finally {
        await ctx.close()
      }
    })
}

/** `messages`, `users,groups`, `all` → entities; a typo fails naming the closest one. */
export function parseEntityList(list: string, flag: string): LegacyEntity[] {
  const names = list
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
  if (names.includes('all')) {
    return [...LEGACY_ENTITIES]
  }
  const out: LegacyEntity[] = []
  for (const name of names) {
    if (!(LEGACY_ENTITIES as readonly string[]).includes(name)) {
      const near = closestName(name, LEGACY_ENTITIES)
      throw new UsageError(
        `${flag}: unknown entity ${JSON.stringify(name)}${near ? ` (did you mean ${near}?)` : ''}; one of ${LEGACY_ENTITIES.join(', ')}, or all`,
      )
    }
    out.push(name as LegacyEntity)
  }
  if (out.length === 0) {
    throw new UsageError(`${flag} needs at least one entity (${LEGACY_ENTITIES.join(', ')}, or all)`)
  }
  return [...new Set(out)]
}

/** A live run would save its own cursor over the reset one after its next page: refused while one is. */
export async function refuseWhileRunLive(store: Pick<LedgerStore, 'listRuns'>, jobId: string, doing = 'not resetting cursors'): Promise<void> {
  const now = Date.now()
  const live = (await store.listRuns(jobId, 1000)).filter((r) => r.status === 'running' && deadRunReason(r, now) === undefined)
  if (live.length > 0) {
    throw new CliError(
      `${doing} of job ${jobId}: ${live.map((r) => `run #${r.id} (${r.mode}, ${r.owner ?? 'unknown owner'})`).join(', ')} is live; stop it or let it finish first`,
      EXIT.USAGE,
    )
  }
}

function isComplete(r: CursorRow | undefined): boolean {
  return typeof r?.cursor === 'object' && r.cursor !== null && (r.cursor as { complete?: unknown }).complete === 1
}

function stateOf(r: CursorRow | undefined): 'not started' | 'in progress' | 'complete' {
  return r === undefined || r.cursor === null ? 'not started' : isComplete(r) ? 'complete' : 'in progress'
}

/** `complete`, `in progress after {"id":"42"}`, `not started`. */
function describeRead(r: CursorRow | undefined): string {
  const state = stateOf(r)
  if (state !== 'in progress') {
    return state
  }
  return `in progress after ${JSON.stringify(r?.cursor)}`
}

function watermarkIso(r: CursorRow | undefined): string | null {
  return typeof r?.watermark === 'number' && Number.isFinite(r.watermark) ? new Date(r.watermark).toISOString() : null
}
