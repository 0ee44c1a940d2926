/**
 * `run --delta --final`'s parts of the `run` command: the guard before anything starts, and the
 * check after the load that the legacy source no longer changes (src/job/final-delta.ts). The
 * run row's stats carry `final: true` from the start and the cutover record once it is known, so
 * `chatferry runs` shows which delta was the final one and when its read began.
 */
import type { Logger } from 'pino'

import {
  cutoverChecked,
  type CutoverRecord,
  describeBlockers,
  describeSourceChanges,
  finalDeltaBlockers,
  sourceChangesSince,
} from '../../job/final-delta.ts'
import type { LedgerContext } from '../../job/ledger-context.ts'
import { CliError } from '../cli-error.ts'
import { EXIT } from '../exit-codes.ts'
import { UsageError } from '../usage-error.ts'

/** `--final` belongs to `--delta`: without it, a usage error (exit 2). */
export function requireDeltaForFinal(opts: { delta?: boolean; final?: boolean }): void {
  if (opts.final === true && opts.delta !== true) {
    throw new UsageError('--final needs --delta: the final read is a delta read; run `chatferry run --delta --final`')
  }
}

/** Refuses (exit 2, naming what to run instead) while the bulk load still has work. */
export async function refuseFinalWhileBusy(ctx: LedgerContext): Promise<void> {
  const problems = await finalDeltaBlockers(ctx.store, ctx.jobId)
  if (problems.length > 0) {
    throw new CliError(describeBlockers(problems), EXIT.USAGE)
  }
}

/**
 * After the final delta's load: counts the source's rows changed since its read began (a fresh
 * snapshot), logs the warning, and returns the record and the exit code: {@link EXIT.SOURCE_CHANGING}
 * when rows changed, else the load's code (the caller asks only after a load that finished: 0 or 3).
 */
export async function checkSourceAfterFinal(
  ctx: LedgerContext,
  readStartedAt: number,
  loadCode: number,
  logger: Logger,
): Promise<{ record: CutoverRecord; code: number }> {
  const changes = await sourceChangesSince(ctx.config, readStartedAt)
  const record = cutoverChecked(readStartedAt, changes, Date.now())
  const said = describeSourceChanges(record)
  if (said.unknown) {
    logger.warn({ jobId: ctx.jobId }, said.unknown)
  }
  if (said.warning) {
    logger.warn({ jobId: ctx.jobId, changedAfterRead: record.changedAfterRead }, said.warning)
  } else {
    logger.info({ jobId: ctx.jobId, readStartedAt: record.readStartedAt }, 'no source row changed after the final read began: the source is frozen')
  }
  return { record, code: record.sourceStillChanging ? EXIT.SOURCE_CHANGING : loadCode }
}
