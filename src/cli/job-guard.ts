/**
 * Which job a command acts on must be a job of the ledger: a scheduler with a typo in `--job`
 * must fail (exit 2), not report an empty job as a success forever. `plan` and `run` create
 * their job; every other command that takes `--job` checks it here once the ledger is open.
 */
import type { LedgerContext } from '../job/ledger-context.ts'
import { defaultJobId } from '../load/config.ts'
import { redactUrl } from '../logger.ts'
import { INVOCATION } from '../version.ts'
import { CliError } from './cli-error.ts'
import { EXIT } from './exit-codes.ts'

/** The job the configuration file itself names (`job.id`, else the target app id). */
export function ownJobId(ctx: Pick<LedgerContext, 'config'>): string {
  return ctx.config.job?.id ?? defaultJobId(ctx.config.target.appId)
}

/** Where the ledger is, for messages: the Postgres URL without its password, or the embedded store's directory. */
export function ledgerPlace(ctx: Pick<LedgerContext, 'config'>): string {
  const { state } = ctx.config
  return state.url !== undefined ? redactUrl(state.url) : `the embedded store in ${state.dir}`
}

/** `run -c <file>`, the command that plans the job of a configuration file. */
export function runCommandFor(ctx: Pick<LedgerContext, 'config'>): string {
  return `${INVOCATION} run -c ${ctx.config.file}`
}

/**
 * Throws {@link CliError} (exit 2) unless the ledger holds the context's job. For the job the
 * configuration names itself, a missing job means "nothing planned yet" (`nothingPlanned`), since
 * `run` creates it; for any other id, "not found" with the jobs the ledger knows.
 */
export async function requireKnownJob(
  ctx: Pick<LedgerContext, 'config' | 'jobId'> & { readonly store: { listJobs(): Promise<{ id: string }[]> } },
  options: { nothingPlanned?: boolean } = {},
): Promise<void> {
  const jobs = await ctx.store.listJobs()
  if (jobs.some((j) => j.id === ctx.jobId)) {
    return
  }
  if (options.nothingPlanned && ctx.jobId === ownJobId(ctx)) {
    throw nothingPlanned(ctx)
  }
  throw new CliError(
    jobs.length === 0
      ? `job ${ctx.jobId} not found: no jobs yet in ${ledgerPlace(ctx)}: run \`${runCommandFor(ctx)}\` first`
      : `job ${ctx.jobId} not found in ${ledgerPlace(ctx)}; known jobs: ${jobs.map((j) => j.id).join(', ')}`,
    EXIT.USAGE,
  )
}

/** The error of `load` when the job has no item at all. */
export function nothingPlanned(ctx: Pick<LedgerContext, 'config' | 'jobId'>): CliError {
  return new CliError(
    `nothing planned for job ${ctx.jobId} in ${ledgerPlace(ctx)}: the job has no items to load; ` +
      `run \`${runCommandFor(ctx)}\` first (it reads the source, plans every item and loads them)`,
    EXIT.USAGE,
  )
}
