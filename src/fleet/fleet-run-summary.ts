/**
 * The end of `fleet run`: one line per tenant (state, done/rejected/remaining, why it failed) and
 * what to do next, or one JSON object (`--json`) with the same per tenant (pure).
 */
import { formatDuration } from '../format-duration.ts'
import { FLEET_EXIT, type TenantOutcome } from './fleet-run-outcome.ts'

export interface FleetRunSummary {
  readonly command: 'fleet run'
  readonly status: 'succeeded' | 'rejected' | 'failed' | 'usage-error'
  readonly exitCode: number
  readonly fleet: string
  readonly durationMs: number
  readonly tenants: readonly {
    tenantId: string
    jobId: string
    state: TenantOutcome['state']
    needsFix: boolean
    reason: string | null
    done: number
    rejected: number
    remaining: number
  }[]
}

export function buildFleetRunSummary(fleet: string, outcomes: readonly TenantOutcome[], exitCode: number, durationMs: number): FleetRunSummary {
  const status =
    exitCode === FLEET_EXIT.OK
      ? 'succeeded'
      : exitCode === FLEET_EXIT.REJECTED
        ? 'rejected'
        : exitCode === FLEET_EXIT.USAGE
          ? 'usage-error'
          : 'failed'
  return {
    command: 'fleet run',
    status,
    exitCode,
    fleet,
    durationMs,
    tenants: outcomes.map((o) => ({
      tenantId: o.tenantId,
      jobId: o.jobId,
      state: o.state,
      needsFix: o.needsFix,
      reason: o.reason ?? null,
      done: o.stats.reduce((a, s) => a + s.done, 0),
      rejected: o.stats.reduce((a, s) => a + s.rejected, 0),
      remaining: o.stats.reduce((a, s) => a + s.remaining, 0),
    })),
  }
}

const n = (v: number) => v.toLocaleString('en-US')

const NEXT: Record<number, string> = {
  [FLEET_EXIT.OK]: 'every tenant is done',
  [FLEET_EXIT.REJECTED]: 'every tenant finished; some have rejected items: `chatferry rejects --job <job id>` per tenant',
  [FLEET_EXIT.ERROR]: 'some tenants failed or stopped for a reason a rerun can fix: run `chatferry fleet run` again, it resumes them',
  [FLEET_EXIT.USAGE]: 'some tenants need a fix first (their reason says what), then run `chatferry fleet run` again',
}

export function formatFleetRunSummary(s: FleetRunSummary): string {
  const width = Math.max(6, ...s.tenants.map((t) => t.tenantId.length))
  const count = (state: string) => s.tenants.filter((t) => t.state === state).length
  const lines = [
    `fleet run ${s.status} in ${formatDuration(s.durationMs / 1000)} (exit ${s.exitCode}, fleet ${s.fleet}): ${s.tenants.length} tenants, ` +
      `${count('done')} done, ${count('rejected')} with rejects, ${count('failed')} failed, ${count('stopped')} stopped`,
    ...s.tenants.map(
      (t) =>
        `  ${t.tenantId.padEnd(width)}  ${t.state.padEnd(8)}  ${n(t.done)} done  ${n(t.rejected)} rejected  ${n(t.remaining)} remaining` +
        `${t.reason ? `  — ${t.needsFix ? 'fix: ' : ''}${t.reason}` : ''}`,
    ),
    NEXT[s.exitCode] ?? '',
  ]
  return `${lines.join('\n')}\n`
}
