import { type Command, Option } from 'commander'

import type { AcceptedReject } from '../../state/accepted-rejects-ledger.ts'
import { ENTITIES, type Entity } from '../../target/schemas.ts'
import { withHelp } from '../help.ts'
import { requireKnownJob } from '../job-guard.ts'
import { openReadContext } from '../ledger-read-context.ts'
import { configOption } from '../options.ts'
import { JOB_OPTION_HELP } from './load.ts'

/** `chatferry rejects`: the items refused for good, with their codes and reasons. */
export function registerRejectsCommand(program: Command): void {
  const rejects = program
    .command('rejects')
    .summary('list rejected items with their codes and reasons')
    .description(
      'List rejected items: entity, legacy id, target key, code, reason; then the updates of loaded items the platform refused ' +
        '(kind such as user.update or message.edit, legacy id, target key, code, reason); then the count per code, and how many ' +
        'rejects were accepted (accept-rejects) and are not listed. --accepted lists those instead, with who accepted them, when and ' +
        'why. A reject whose row a later read loaded is no reject any more. Needs no API key or source ' +
        'password. While a job runs it needs a Postgres ledger (state.url): an embedded store another process holds is refused (exit 1; `status` works meanwhile).',
    )
  withHelp(rejects, {
    exits: [
      [0, 'listed (also when there are none)'],
      [1, 'the ledger could not be read, or another process holds the embedded store'],
      [2, 'usage or configuration error, unknown job'],
    ],
    examples: [
      ['rejects', 'every rejected item of the job'],
      ['rejects --entity messages --code ERR_UID_NOT_FOUND', 'only those messages'],
      ['rejects --json > rejects.json', 'as one JSON array'],
      ['rejects --accepted', 'the accepted rejects, with who accepted them, when and why'],
    ],
  })
  rejects
    .addOption(configOption())
    .option('--job <id>', JOB_OPTION_HELP)
    .option('--code <code>', 'only items rejected with this code')
    .addOption(new Option('--entity <entity>', 'only this entity').choices(ENTITIES))
    .option('--accepted', 'list the rejects accepted with accept-rejects instead (with who, when and why)')
    .option('--json', 'print JSON (one array)')
    .action(async (opts: { config: string; job?: string; code?: string; entity?: Entity; accepted?: boolean; json?: boolean }) => {
      const ctx = await openReadContext({ config: opts.config, ...(opts.job !== undefined ? { job: opts.job } : {}) })
      try {
        await requireKnownJob(ctx)
        const filter = { ...(opts.code !== undefined ? { code: opts.code } : {}), ...(opts.entity !== undefined ? { entity: opts.entity } : {}) }
        if (opts.accepted) {
          printAccepted(await ctx.store.acceptedRejects.list(ctx.jobId, filter), opts.json === true)
          return
        }
        const accepted = (await ctx.store.entityStats(ctx.jobId)).reduce(
          (a, s) => a + (opts.entity === undefined || s.entity === opts.entity ? s.accepted : 0),
          0,
        )
        const acceptedLine = accepted > 0 ? `${accepted} accepted reject(s) not listed: rejects --accepted\n` : ''
        const rejects = await ctx.store.listRejects(ctx.jobId, filter)
        const updates = await ctx.store.updateLane.rejects(ctx.jobId, filter)
        if (opts.json) {
          // Items first, then the refused updates (they carry `kind` and `httpStatus`).
          process.stdout.write(`${JSON.stringify([...rejects, ...updates], null, 2)}\n`)
          return
        }
        const all = [...rejects.map((r) => ({ ...r, label: r.entity as string })), ...updates.map((u) => ({ ...u, label: u.kind }))]
        if (all.length === 0) {
          process.stdout.write(`no rejected items\n${acceptedLine}`)
          return
        }
        process.stdout.write('entity or update\tlegacy id\ttarget key\tcode\treason\n')
        for (const r of all) {
          process.stdout.write(`${r.label}\t${r.legacyId}\t${r.targetKey}\t${r.code ?? ''}\t${(r.message ?? '').replace(/\s+/g, ' ')}\n`)
        }
        const byCode = new Map<string, number>()
        for (const r of all) {
          byCode.set(r.code ?? '', (byCode.get(r.code ?? '') ?? 0) + 1)
        }
        const parts = [`${rejects.length} rejected`, ...(updates.length > 0 ? [`${updates.length} update(s) rejected`] : [])]
        process.stdout.write(`${parts.join(', ')}: ${[...byCode].map(([c, k]) => `${c} ${k}`).join(', ')}\n${acceptedLine}`)
      } finally {
        await ctx.close()
      }
    })
}

/** `rejects --accepted`: each accepted reject with who accepted it, when and why. */
function printAccepted(accepted: readonly AcceptedReject[], json: boolean): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(accepted, null, 2)}\n`)
    return
  }
  if (accepted.length === 0) {
    process.stdout.write('no accepted rejects\n')
    return
  }
  process.stdout.write('entity\tlegacy id\ttarget key\tcode\treject reason\taccepted by\taccepted at\twhy\n')
  for (const a of accepted) {
    const line = [
      a.entity,
      a.legacyId,
      a.targetKey,
      a.code ?? '',
      (a.message ?? '').replace(/\s+/g, ' '),
      a.acceptedBy,
      a.acceptedAt.toISOString(),
      a.reason,
    ]
    process.stdout.write(`${line.join('\t')}\n`)
  }
  process.stdout.write(`${accepted.length} accepted reject(s)\n`)
}
