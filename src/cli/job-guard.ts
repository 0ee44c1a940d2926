/**
 * Which job a command acts on must be a job of the ledger: a scheduler with a typo in `--job`
 * must fail (exit 2), not report an empty job as a success forever. Every command that takes
 * `--job` checks it here once the ledger is open. `plan` and `run` may start a new job, but never
 * by accident: while the ledger holds other jobs, a job it does not hold needs `--new-job` (a
 * typo would otherwise read and send the whole history again), and a new job that a failed
 * command left without a single item is removed again, so no phantom job stays behind.
 */
import { closestName } from '../did-you-mean.ts'
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
      : `job ${ctx.jobId} not found in ${ledgerPlace(ctx)}; known jobs: ${jobs.map((j) => j.id).join(', ')}${didYouMean(ctx.jobId, jobs)}`,
    EXIT.USAGE,
  )
}

function didYouMean(jobId: string, jobs: readonly { id: string }[]): string {
  const near = closestName(
    jobId,
    jobs.map((j) => j.id),
  )
  return near === undefined ? '' : ` (did you mean ${near}?)`
}

/** Whether `plan`/`run` act on a job the ledger did not hold before (see {@link admitJob}). */
export interface AdmittedJob {
  readonly jobId: string
  /** Started beside the other jobs of the ledger (with `--new-job`): removed again if it stays empty. */
  readonly besideOthers: boolean
}

/**
 * `plan` and `run`: the job must be one the ledger holds, or the ledger holds no job yet (the
 * first run), or the operator asked for a new one (`--new-job`). Otherwise exit 2 before any
 * I/O beyond the ledger, naming the jobs it holds: a mistyped `--job` must not start a job that
 * reads and sends the whole history again.
 */
export async function admitJob(
  ctx: Pick<LedgerContext, 'config' | 'jobId'> & { readonly store: { listJobs(): Promise<{ id: string }[]> } },
  newJob: boolean,
): Promise<AdmittedJob> {
  const jobs = await ctx.store.listJobs()
  if (jobs.some((j) => j.id === ctx.jobId)) {
    return { jobId: ctx.jobId, besideOthers: false }
  }
  if (jobs.length === 0 || newJob) {
    return { jobId: ctx.jobId, besideOthers: jobs.length > 0 }
  }
  const known = jobs.map((j) => j.id)
  const near = closestName(ctx.jobId, known)
  throw new CliError(
    `job ${ctx.jobId} is not in ${ledgerPlace(ctx)}, which holds ${known.length === 1 ? 'job' : 'jobs'} ${known.join(', ')}` +
      `${near === undefined ? '' : ` (did you mean ${near}?)`}; a new job reads and sends the whole history again, so it is ` +
      `never started by accident: to continue a job, pass its id (--job ${near ?? known[0]}); to start job ${ctx.jobId}, add --new-job`,
    EXIT.USAGE,
  )
}

/**
 * After `run` on a job it started with `--new-job`: when the command did not finish (an error, a
 * stop, a refusal) and the job holds no item, the job is removed again (its run row with it), so a
 * failed `run --new-job --job new` leaves no phantom job that the next mistyped `--job` would find
 * without the flag. (The first job of an empty ledger stays, with its failed run row for `runs`:
 * there is no other job to mistake it for.)
 */
export async function forgetJobIfPhantom(
  ctx: Pick<LedgerContext, 'store'>,
  admitted: AdmittedJob | undefined,
  exitCode: number | undefined,
): Promise<void> {
  if (admitted === undefined || !admitted.besideOthers || exitCode === EXIT.OK || exitCode === EXIT.REJECTED) {
    return
  }
  if (!(await ctx.store.hasItems(admitted.jobId)) && (await ctx.store.listJobs()).some((j) => j.id === admitted.jobId)) {
    await ctx.store.purgeJob(admitted.jobId)
  }
}

/** The error of `load` when the job has no item at all. */
export function nothingPlanned(ctx: Pick<LedgerContext, 'config' | 'jobId'>): CliError {
  return new CliError(
    `nothing planned for job ${ctx.jobId} in ${ledgerPlace(ctx)}: the job has no items to load; ` +
      `run \`${runCommandFor(ctx)}\` first (it reads the source, plans every item and loads them)`,
    EXIT.USAGE,
  )
}
