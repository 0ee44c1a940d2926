/**
 * `run --delta --final`'s parts of the `run` command: the guard before anything starts, and the
 * check after the load that the legacy source no longer changes (src/job/final-delta.ts). The
 * run row's stats carry `final: true` from the start and the cutover record once it is known, so
 * `chatferry runs` shows which delta was the final one and when its read began.
 */
import { setTimeout } from 'node:timers/promises'

import { InvalidArgumentError } from 'commander'
import type { Logger } from 'pino'

import { formatDuration } from '../../format-duration.ts'
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
 * snapshot). When none changed and the operator set a quiet period, waits it out and asks again,
 * so "frozen" means no row changed for at least that long — a writer that writes every few
 * seconds cannot slip past a check that covers half a second. Logs the outcome and returns the
 * record and the exit code: {@link EXIT.SOURCE_CHANGING} when rows changed, else the load's code
 * (the caller asks only after a load that finished: 0 or 3).
 */
export async function checkSourceAfterFinal(
  ctx: LedgerContext,
  readStartedAt: number,
  loadCode: number,
  logger: Logger,
  quiet: { periodMs: number; signal?: AbortSignal } = { periodMs: 0 },
): Promise<{ record: CutoverRecord; code: number }> {
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
  return { record, code: record.sourceStillChanging ? EXIT.SOURCE_CHANGING : loadCode }
}

/** `--quiet-period`: `90`, `90s`, `5m` or `1h` → milliseconds (InvalidArgumentError: commander's exit 2, naming the flag). */
export function parseQuietPeriod(value: string): number {
  const m = /^(\d+(?:\.\d+)?)\s*(s|m|h)?$/.exec(value.trim())
  if (!m) {
    throw new InvalidArgumentError(`expected seconds or a duration such as 90s, 5m or 1h, got ${value}`)
  }
  const ms = Number(m[1]) * { s: 1000, m: 60_000, h: 3_600_000 }[m[2] ?? 's']!
  if (ms > 24 * 3_600_000) {
    throw new InvalidArgumentError(`at most 24h, got ${value}`)
  }
  return Math.round(ms)
}
