/**
 * The end of `run`, `load` and `retry-rejected`: one summary of what the job stands at, either as
 * exactly one JSON object on stdout (`--json`, for schedulers; everything else goes to stderr) or
 * as a few lines for a person. `main.ts` prints the JSON object for errors too (see
 * {@link startSummary}), so a `--json` caller always gets one object, whatever happened.
 */
import { formatDuration } from '../format-duration.ts'
import type { CutoverRecord } from '../job/final-delta.ts'
import type { UpdateKindReport } from '../load/update-progress.ts'
import type { EntityStats } from '../state/store.ts'
import { EXIT } from './exit-codes.ts'

export type SummaryStatus = 'succeeded' | 'rejected' | 'failed' | 'interrupted' | 'usage-error' | 'source-changing'

export interface EntitySummary {
  total: number
  done: number
  created: number
  alreadyPresent: number
  skipped: number
  rejected: number
  /** Rejects an operator accepted (`accept-rejects`): not in `rejected`, no exit 3. */
  accepted: number
  remaining: number
}

export interface CommandSummary {
  command: string
  status: SummaryStatus
  exitCode: number
  jobId: string | null
  runId: number | null
  durationMs: number
  entities: Record<string, EntitySummary>
  /** The update lane, per update kind (`user.update`, `message.edit`, …): only kinds the job has. */
  updates?: Record<string, UpdateSummary>
  /** Only for `retry-rejected`: items planned again. */
  replanned?: number
  /** Only for `run --delta --final`: the cutover time and the source's changes after the read (final-delta.ts). */
  cutover?: CutoverRecord
  error?: string
}

/** Where the updates of one kind stand (the job's, from the ledger). */
export interface UpdateSummary {
  done: number
  rejected: number
  /** Planned or in flight. */
  remaining: number
  /** Counted only, by policy. */
  reported: number
  /** Not applied: the item changed on the platform (`changes.conflicts: report`). */
  conflict: number
  /** Dropped: the item changed on the platform (`changes.conflicts: platform-wins`). */
  dropped: number
}

/** The commands that end with a summary (and take `--json` for it). */
export const SUMMARY_COMMANDS: readonly string[] = ['run', 'load', 'retry-rejected', 'schedule', 'unschedule', 'schedules']

let pending: { command: string; startedAt: number; json: boolean; jobId?: string; runId?: number; printed: boolean } | undefined

/** Called first by a summarising command; main.ts then prints a JSON object for an error too. */
export function startSummary(command: string, json: boolean): void {
  pending = { command, startedAt: Date.now(), json, printed: false }
}

/** What is known so far (the job once the ledger is open, the run once it started). */
export function noteSummary(fields: { jobId?: string; runId?: number }): void {
  if (pending) {
    Object.assign(pending, fields)
  }
}

export function statusOfExit(code: number, interrupted = false): SummaryStatus {
  if (interrupted) {
    return 'interrupted'
  }
  if (code === EXIT.SOURCE_CHANGING) {
    return 'source-changing'
  }
  return code === EXIT.OK ? 'succeeded' : code === EXIT.REJECTED ? 'rejected' : code === EXIT.USAGE ? 'usage-error' : 'failed'
}

export function entitySummaries(stats: readonly EntityStats[]): Record<string, EntitySummary> {
  const out: Record<string, EntitySummary> = {}
  for (const s of stats) {
    out[s.entity] = {
      total: s.total,
      done: s.done,
      created: s.created,
      alreadyPresent: s.alreadyPresent,
      skipped: s.skipped,
      rejected: s.rejected,
      accepted: s.accepted,
      remaining: s.remaining,
    }
  }
  return out
}

export function updateSummaries(report: readonly UpdateKindReport[]): Record<string, UpdateSummary> {
  const out: Record<string, UpdateSummary> = {}
  for (const k of report) {
    out[k.kind] = { done: k.done, rejected: k.rejected, remaining: k.remaining, reported: k.reported, conflict: k.conflict, dropped: k.dropped }
  }
  return out
}

/** Builds the summary of the command started with {@link startSummary}. */
export function buildSummary(fields: {
  exitCode: number
  interrupted?: boolean
  stats?: readonly EntityStats[]
  updates?: readonly UpdateKindReport[]
  replanned?: number
  cutover?: CutoverRecord
  error?: string
}): CommandSummary {
  const p = pending
  return {
    command: p?.command ?? 'chatferry',
    status: statusOfExit(fields.exitCode, fields.interrupted),
    exitCode: fields.exitCode,
    jobId: p?.jobId ?? null,
    runId: p?.runId ?? null,
    durationMs: p ? Date.now() - p.startedAt : 0,
    entities: entitySummaries(fields.stats ?? []),
    ...(fields.updates !== undefined && fields.updates.length > 0 ? { updates: updateSummaries(fields.updates) } : {}),
    ...(fields.replanned !== undefined ? { replanned: fields.replanned } : {}),
    ...(fields.cutover !== undefined ? { cutover: fields.cutover } : {}),
    ...(fields.error !== undefined ? { error: fields.error } : {}),
  }
}

const n = (v: number) => v.toLocaleString('en-US')

/** The few lines a person reads at the end of `run` and `load`. */
export function formatSummary(s: CommandSummary): string {
  const rows = Object.entries(s.entities).filter(([, e]) => e.total > 0)
  const total = rows.reduce((a, [, e]) => a + e.total, 0)
  const remaining = rows.reduce((a, [, e]) => a + e.remaining, 0)
  const updates = Object.entries(s.updates ?? {})
  const rejected = rows.reduce((a, [, e]) => a + e.rejected, 0) + updates.reduce((a, [, u]) => a + u.rejected, 0)
  const head =
    s.status === 'succeeded'
      ? remaining === 0
        ? `all ${n(total)} items of job ${s.jobId} are done or skipped`
        : `job ${s.jobId}: ${n(remaining)} items remaining`
      : s.status === 'rejected'
        ? `finished with ${n(rejected)} rejected item(s) or update(s): see \`chatferry rejects\`, fix the cause, \`chatferry retry-rejected\`, then load again (or accept judged ones: \`chatferry accept-rejects --reason …\`)`
        : s.status === 'interrupted'
          ? `interrupted: run the same command again to resume`
          : s.status === 'source-changing'
            ? `finished, but the source changed after the final read began: freeze the legacy system and run \`chatferry run --delta --final\` again`
            : s.status === 'usage-error'
              ? `${s.error ?? 'usage or configuration error'}; fix it first, a rerun fails the same way`
              : `failed${s.error ? `: ${s.error}` : ''}; run the same command again to resume`
  const lines = [
    `${s.command} ${s.status} in ${formatDuration(s.durationMs / 1000)} (exit ${s.exitCode}, job ${s.jobId ?? '-'}, run ${s.runId ?? '-'}): ${head}`,
  ]
  for (const [entity, e] of rows) {
    lines.push(
      `  ${entity.padEnd(8)} ${n(e.done).padStart(9)} done (${n(e.created)} created, ${n(e.alreadyPresent)} already present)  ${n(e.skipped)} skipped  ${n(e.rejected)} rejected${e.accepted > 0 ? ` (+${n(e.accepted)} accepted)` : ''}  ${n(e.remaining)} remaining`,
    )
  }
  for (const [kind, u] of updates) {
    lines.push(
      `  ${kind.padEnd(16)} ${n(u.done).padStart(7)} done  ${n(u.rejected)} rejected  ${n(u.remaining)} remaining${u.reported > 0 ? `  ${n(u.reported)} reported only` : ''}${
        u.conflict > 0 ? `  ${n(u.conflict)} CONFLICT (changed on the platform, not applied)` : ''
      }${u.dropped > 0 ? `  ${n(u.dropped)} dropped (platform wins)` : ''}`,
    )
  }
  return `${lines.join('\n')}\n`
}

/** Prints the summary: one JSON object on stdout with `--json`, else the lines on stdout. */
export function printSummary(s: CommandSummary): void {
  if (pending) {
    pending.printed = true
  }
  if (pending?.json) {
    process.stdout.write(`${JSON.stringify(s)}\n`)
  } else {
    process.stdout.write(formatSummary(s))
  }
}

/** Whether the running command promised JSON on stdout (then its other output goes to stderr). */
export function jsonRequested(): boolean {
  return pending?.json === true
}

/**
 * After a command's work: when a signal stopped it before it printed its summary (the signal's
 * abort surfaced as an error that runStoppable turned into exit 1), the summary of that stop.
 */
export function printSummaryIfMissing(exitCode: number, interrupted: boolean): void {
  if (!pending || pending.printed) {
    return
  }
  printSummary(buildSummary({ exitCode, interrupted }))
}

/**
 * For main.ts: when a `--json` command ends by an error before printing its summary, the JSON
 * object of that error (so stdout still holds exactly one object).
 */
export function printErrorSummary(exitCode: number, message: string): void {
  if (!pending?.json || pending.printed) {
    return
  }
  printSummary(buildSummary({ exitCode, error: message }))
}
