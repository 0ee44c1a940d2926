/**
 * The notifications a command sends when it ends, from what it already knows (its summary): a run
 * that failed or was stopped (`run.failed`), one that ended (`run.finished`), the items newly
 * rejected by it when they reach `notify.rejectThreshold` (`rejects.threshold`), and the final
 * delta's end (`delta.final.done`); `verify`'s result (`verify.result`).
 */
import type { Notification } from './notifier.ts'

export interface RunEnd {
  readonly command: string
  readonly jobId: string
  readonly runId: number | null
  /** succeeded, rejected, failed, interrupted, source-changing. */
  readonly status: string
  readonly exitCode: number
  readonly durationMs: number
  readonly entities: Readonly<Record<string, { total: number; done: number; rejected: number; remaining: number }>>
  readonly error?: string
  /** `run --delta --final`. */
  readonly final: boolean
  /** The job's rejected items when the command started. */
  readonly rejectedBefore: number
  readonly rejectThreshold: number
}

const n = (v: number) => v.toLocaleString('en-US')

export function runEndNotifications(r: RunEnd): Notification[] {
  const sum = (k: 'total' | 'done' | 'rejected' | 'remaining') => Object.values(r.entities).reduce((a, e) => a + e[k], 0)
  const counts = { done: sum('done'), rejected: sum('rejected'), remaining: sum('remaining'), total: sum('total') }
  const details = { command: r.command, runId: r.runId, status: r.status, exitCode: r.exitCode, durationMs: r.durationMs, ...counts }
  const run = `${r.command}${r.runId !== null ? ` #${r.runId}` : ''}`
  const out: Notification[] = []
  if (r.status === 'failed' || r.status === 'interrupted') {
    out.push({
      event: 'run.failed',
      jobId: r.jobId,
      summary: `${run} ${r.status}${r.error ? `: ${r.error}` : ''} (${n(counts.done)} done, ${n(counts.remaining)} remaining; rerun it to resume)`,
      details: { ...details, ...(r.error !== undefined ? { error: r.error } : {}) },
    })
  } else {
    out.push({
      event: 'run.finished',
      jobId: r.jobId,
      summary: `${run} ${r.status}: ${n(counts.done)} of ${n(counts.total)} done, ${n(counts.rejected)} rejected, ${n(counts.remaining)} remaining`,
      details,
    })
    if (r.final) {
      out.push({
        event: 'delta.final.done',
        jobId: r.jobId,
        summary:
          r.status === 'source-changing'
            ? `the final delta ended, but the source was still written after its read: freeze it and run the final delta again`
            : `the final delta is done (${r.status}): the platform has the legacy history up to the cutover`,
        details,
      })
    }
  }
  const fresh = counts.rejected - r.rejectedBefore
  if (fresh >= r.rejectThreshold) {
    out.push({
      event: 'rejects.threshold',
      jobId: r.jobId,
      summary: `${run} rejected ${n(fresh)} new item(s) (${n(counts.rejected)} in all): see chatferry rejects`,
      details: { ...details, newRejects: fresh },
    })
  }
  return out
}

/** `verify`'s result: passed or not, with its mismatches. */
export function verifyNotification(v: {
  jobId: string
  runId: string
  passed: boolean
  mismatches: number
  unexplained: number
  reportFile?: string
}): Notification {
  return {
    event: 'verify.result',
    jobId: v.jobId,
    summary: v.passed
      ? `verify ${v.runId} passed (${n(v.mismatches)} mismatch(es), all explained)`
      : `verify ${v.runId} FAILED: ${n(v.unexplained)} unexplained mismatch(es) of ${n(v.mismatches)}${v.reportFile ? ` — report ${v.reportFile}` : ''}`,
    details: { runId: v.runId, passed: v.passed, mismatches: v.mismatches, unexplained: v.unexplained },
  }
}
