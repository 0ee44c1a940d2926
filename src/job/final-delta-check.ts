/**
 * The end of `run --delta --final` (final-delta.ts): after its load, count the legacy source's rows
 * changed since the final read began, in a fresh snapshot. When none changed and the operator set a
 * quiet period, wait it out and ask again, so "frozen" means no row changed for at least that long —
 * a writer that writes every few seconds cannot slip past a check that covers half a second. Logs
 * the outcome; the job's run (job-run.ts) records it in the run row.
 */
import { setTimeout } from 'node:timers/promises'

import type { Logger } from 'pino'

import { formatDuration } from '../format-duration.ts'
import { cutoverChecked, type CutoverRecord, describeSourceChanges, sourceChangesSince } from './final-delta.ts'
import type { LedgerContext } from './ledger-context.ts'

/** The cutover record once the source was checked (`sourceStillChanging` when rows changed after the read began). */
export async function checkSourceAfterFinal(
  ctx: Pick<LedgerContext, 'config' | 'jobId'>,
  readStartedAt: number,
  logger: Logger,
  quiet: { periodMs: number; signal?: AbortSignal } = { periodMs: 0 },
): Promise<CutoverRecord> {
  const firstCheckAt = Date.now()
  let changes = await sourceChangesSince(ctx.config, readStartedAt)
  const changed = () => Object.values(changes).some((v) => (v ?? 0) > 0)
  if (!changed() && quiet.periodMs > 0) {
    logger.info(
      { jobId: ctx.jobId, quietPeriodMs: quiet.periodMs },
      `no source row changed since the final read began; waiting the quiet period (${formatDuration(quiet.periodMs / 1000)}) to check again`,
    )
    await setTimeout(quiet.periodMs, undefined, quiet.signal ? { signal: quiet.signal } : {})
    changes = await sourceChangesSince(ctx.config, readStartedAt)
  }
  const checkedAt = Date.now()
  // The source's clock gave readStartedAt; the local clock times the checks: the window is at least this long.
  const quietFor = Math.max(0, checkedAt - firstCheckAt) + Math.max(0, firstCheckAt - readStartedAt)
  const record = cutoverChecked(readStartedAt, changes, checkedAt, { periodMs: quiet.periodMs, forMs: quietFor })
  const said = describeSourceChanges(record)
  if (said.unknown) {
    logger.warn({ jobId: ctx.jobId }, said.unknown)
  }
  if (said.warning) {
    logger.warn({ jobId: ctx.jobId, changedAfterRead: record.changedAfterRead }, said.warning)
  } else {
    logger.info(
      { jobId: ctx.jobId, readStartedAt: record.readStartedAt, quietForMs: quietFor },
      `no source row changed in the ${formatDuration(quietFor / 1000)} since the final read began: the source is frozen` +
        (quiet.periodMs > 0 ? '' : ' (a writer that writes less often may not have shown: set --quiet-period, e.g. 5m)'),
    )
  }
  return record
}
