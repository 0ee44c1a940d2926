import { readFileSync } from 'node:fs'
import { hostname, userInfo } from 'node:os'
import { resolve } from 'node:path'

import { type Command, Option } from 'commander'

import { closestName } from '../../did-you-mean.ts'
import type { RejectSelection } from '../../state/accepted-rejects-ledger.ts'
import { ENTITIES, type Entity } from '../../target/schemas.ts'
import { INVOCATION } from '../../version.ts'
import { CliError } from '../cli-error.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openCommandContext } from '../open-command-context.ts'
import { configOption, jsonOption } from '../options.ts'
import { UsageError } from '../usage-error.ts'
import { JOB_OPTION_HELP } from './load.ts'

interface AcceptFlags {
  config: string
  job?: string
  reason?: string
  code?: string
  entity?: Entity
  ids?: string
  idsFile?: string
  all?: boolean
  by?: string
  withdraw?: boolean
  json?: boolean
}

/**
 * `chatferry accept-rejects`: the operator's judgement on rejects they know about (a line whose
 * room is NULL, a duplicated id): accepted with a reason, by whom, when (src/state/
 * accepted-rejects-ledger.ts), they no longer make a run exit 3; a new reject still does.
 */
export function registerAcceptRejectsCommand(program: Command): void {
  const accept = program
    .command('accept-rejects')
    .summary('accept judged rejects with a reason: they no longer make a run exit 3')
    .description(
      'Accept rejected items you have judged (by code, entity, id list or file), with a reason kept in the ledger with who ' +
        'accepted them and when. Accepted rejects are listed apart (`rejects --accepted`), counted as accepted in status and ' +
        'summaries, and no longer make run, load or a delta exit 3; a new reject still does. An item rejected again for another ' +
        'code is a new reject. --withdraw makes accepted rejects open again.',
    )
  withHelp(accept, {
    exits: [
      [0, 'accepted (or withdrawn); the summary says how many and what is still open'],
      [1, 'the ledger could not be written'],
      [
        2,
        'usage or configuration error; unknown job; no selector or no --reason; an id that names no rejected item, or a selection that matches no open reject (nothing accepted)',
      ],
    ],
    examples: [
      ["accept-rejects --code MAPPING_INVALID --reason 'no room'", 'accept one kind, saying why'],
      ["accept-rejects --ids 17,42 --reason 'duplicates'", 'accept named rows (legacy ids)'],
      ["accept-rejects --ids-file judged.tsv --reason 'reviewed'", 'accept the lines of `rejects > judged.tsv` kept after review'],
      ['rejects --accepted', 'what was accepted, by whom, when and why'],
      ['accept-rejects --ids 17 --withdraw', 'make an accepted reject open again'],
    ],
  })
  accept
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--reason <text>', 'why these rejects are acceptable (required; kept in the ledger and shown by rejects --accepted)')
    .option('--code <code>', 'the rejects of this code')
    .addOption(new Option('--entity <entity>', 'the rejects of this entity').choices(ENTITIES))
    .option('--ids <list>', 'these legacy ids or target keys, comma-separated')
    .option(
      '--ids-file <file>',
      'ids in a file, one per line: a legacy id or target key, or a line of `chatferry rejects` (entity, tab, legacy id, …); blank lines and lines starting with # are skipped',
    )
    .option('--all', 'every open reject of the job (with --code/--entity: all of those)')
    .option('--by <name>', 'who accepts (default: $CHATFERRY_OPERATOR, else user@host)')
    .option('--withdraw', 'withdraw the acceptance of the selected rejects instead (no --reason needed)')
    .addOption(jsonOption('print one JSON object (jobId, accepted, alreadyAccepted, superseded, withdrawn, open)'))
    .action(async (opts: AcceptFlags) => {
      const selection = selectionOf(opts)
      if (!opts.withdraw && (opts.reason === undefined || opts.reason.trim() === '')) {
        throw new UsageError('--reason is required: say why these rejects are acceptable (it is kept in the ledger with who accepted them and when)')
      }
      const ctx = await openCommandContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        await requireKnownJob(ctx)
        if (opts.withdraw) {
          const withdrawn = await ctx.store.acceptedRejects.withdraw(ctx.jobId, selection)
          const open = await openRejects(ctx.store, ctx.jobId)
          write(
            opts.json,
            { jobId: ctx.jobId, withdrawn, open },
            `withdrew ${withdrawn} acceptance(s) of job ${ctx.jobId}; ${open} open reject(s) now`,
          )
          return
        }
        const by = opts.by ?? process.env.CHATFERRY_OPERATOR ?? `${userInfo().username}@${hostname()}`
        const outcome = await ctx.store.acceptedRejects.accept(ctx.jobId, selection, { reason: opts.reason!.trim(), by })
        if (outcome.unknownIds.length > 0) {
          throw new CliError(
            `${outcome.unknownIds.length} id(s) name no rejected item of job ${ctx.jobId}${describeSelection(opts)}: ${outcome.unknownIds.slice(0, 20).join(', ')}` +
              `${outcome.unknownIds.length > 20 ? `, +${outcome.unknownIds.length - 20} more` : ''}; nothing was accepted (\`${INVOCATION} rejects -c ${ctx.config.file}\` lists the rejects)`,
          )
        }
        if (outcome.accepted.length === 0 && outcome.alreadyAccepted === 0) {
          throw await nothingMatched(ctx, opts, outcome.superseded)
        }
        const open = await openRejects(ctx.store, ctx.jobId)
        const byEntity = new Map<string, number>()
        for (const a of outcome.accepted) {
          byEntity.set(a.entity, (byEntity.get(a.entity) ?? 0) + 1)
        }
        write(
          opts.json,
          {
            jobId: ctx.jobId,
            accepted: outcome.accepted.length,
            alreadyAccepted: outcome.alreadyAccepted,
            superseded: outcome.superseded,
            open,
            reason: opts.reason!.trim(),
            by,
          },
          `accepted ${outcome.accepted.length} reject(s) of job ${ctx.jobId}` +
            `${byEntity.size > 0 ? ` (${[...byEntity].map(([e, k]) => `${e} ${k}`).join(', ')})` : ''}, by ${by}: ${opts.reason!.trim()}` +
            `${outcome.alreadyAccepted > 0 ? `; ${outcome.alreadyAccepted} were accepted before` : ''}` +
            `${outcome.superseded > 0 ? `; ${outcome.superseded} were loaded since (nothing to accept)` : ''}` +
            `; ${open} open reject(s) left${open === 0 ? ': the next run exits 0 unless a new reject comes' : ` (\`${INVOCATION} rejects\` lists them)`}`,
        )
      } finally {
        await ctx.close()
      }
    })
}

/** The rejects the flags select; at least one selector, so nothing is accepted by a bare command. */
function selectionOf(opts: AcceptFlags): RejectSelection {
  if (opts.ids !== undefined && opts.idsFile !== undefined) {
    throw new UsageError('--ids and --ids-file: give one of them')
  }
  const ids =
    opts.ids !== undefined
      ? opts.ids
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean)
          .map((id) => ({ id }))
      : opts.idsFile !== undefined
        ? idsOfFile(opts.idsFile)
        : undefined
  if (ids !== undefined && ids.length === 0) {
    throw new UsageError(`${opts.ids !== undefined ? '--ids' : `--ids-file ${opts.idsFile}`} names no id`)
  }
  if (ids === undefined && opts.code === undefined && opts.entity === undefined && !opts.all) {
    throw new UsageError('say which rejects: --code, --entity, --ids, --ids-file, or --all (every open reject of the job)')
  }
  return {
    ...(opts.entity !== undefined ? { entity: opts.entity } : {}),
    ...(opts.code !== undefined ? { code: opts.code } : {}),
    ...(ids !== undefined ? { ids } : {}),
  }
}

/** The lines `chatferry rejects` prints after its items (the count per code, the accepted ones not listed). */
const REJECTS_SUMMARY_LINE = /^(\d+ rejected[,:] |\d+ accepted reject\(s\) not listed|no rejected items$)/

/** The ids of a file: plain ids, or the lines `chatferry rejects` prints (entity, tab, legacy id, …). */
function idsOfFile(file: string): { entity?: Entity; id: string }[] {
  let text: string
  try {
    text = readFileSync(resolve(file), 'utf8')
  } catch (err) {
    throw new UsageError(`--ids-file ${file}: ${(err as NodeJS.ErrnoException).code === 'ENOENT' ? 'file not found' : (err as Error).message}`)
  }
  const out: { entity?: Entity; id: string }[] = []
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trimEnd()
    if (line.trim() === '' || line.startsWith('#') || REJECTS_SUMMARY_LINE.test(line)) {
      continue
    }
    if (!line.includes('\t')) {
      out.push({ id: line.trim() })
      continue
    }
    const [first = '', second = ''] = line.split('\t')
    // A line of `rejects`: its header, its refused updates (`message.edit` …) and its count line are no items.
    if ((ENTITIES as readonly string[]).includes(first) && second !== '') {
      out.push({ entity: first as Entity, id: second })
    }
  }
  return out
}

function describeSelection(opts: AcceptFlags): string {
  const parts = [opts.entity !== undefined ? `entity ${opts.entity}` : '', opts.code !== undefined ? `code ${opts.code}` : ''].filter(Boolean)
  return parts.length > 0 ? ` (${parts.join(', ')})` : ''
}

/** Exit 2 for a selection that matches nothing, naming what the job's open rejects are. */
async function nothingMatched(ctx: Awaited<ReturnType<typeof openCommandContext>>, opts: AcceptFlags, superseded: number): Promise<CliError> {
  const rejects = await ctx.store.listRejects(ctx.jobId)
  const byCode = new Map<string, number>()
  for (const r of rejects) {
    byCode.set(r.code ?? '(no code)', (byCode.get(r.code ?? '(no code)') ?? 0) + 1)
  }
  const near = opts.code !== undefined ? closestName(opts.code, [...byCode.keys()]) : undefined
  const open =
    rejects.length === 0 ? 'the job has no open reject' : `its open rejects by code: ${[...byCode].map(([c, k]) => `${c} ${k}`).join(', ')}`
  return new CliError(
    `no open reject of job ${ctx.jobId} matches${describeSelection(opts)}${superseded > 0 ? ` (${superseded} were loaded since)` : ''}` +
      `${near !== undefined ? ` (did you mean --code ${near}?)` : ''}; ${open}; nothing was accepted`,
  )
}

async function openRejects(store: { entityStats(jobId: string): Promise<{ rejected: number }[]> }, jobId: string): Promise<number> {
  return (await store.entityStats(jobId)).reduce((a, s) => a + s.rejected, 0)
}

function write(json: boolean | undefined, object: Record<string, unknown>, text: string): void {
  process.stdout.write(json ? `${JSON.stringify(object)}\n` : `${text}\n`)
}
