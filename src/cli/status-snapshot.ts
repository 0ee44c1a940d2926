/**
 * What `status --json` prints, computed in one place: `status` prints it, `dashboard` serves it
 * (src/cli/dashboard/), so the page and the command agree by construction. Computed from the
 * ledger's readings (status-readings.ts: read here, or by the run holding the embedded store) and
 * the configuration (the quotas, the retention policy), so it reads nothing itself.
 */
import type { ResolvedConfig } from '../job/config.ts'
import { deadRunReason } from '../job/run-liveness.ts'
import { buildReport, type EntityReport } from '../load/progress.ts'
import { type UpdateKindReport, updateReport } from '../load/update-progress.ts'
import type { FileCounts } from '../state/index.ts'
import type { RunRecord } from '../state/store.ts'
import type { StatusReadings } from './status-readings.ts'
import { type StatusRetentionEdge, statusRetentionEdge } from './status-retention-edge.ts'
import { type StatusUpdates, statusUpdates } from './status-updates.ts'

export interface StatusSnapshot {
  readonly jobId: string
  readonly appId: string
  readonly quota: ResolvedConfig['target']['quota']
  readonly chatQuota: ResolvedConfig['target']['chatQuota']
  readonly entities: EntityReport[]
  /** The last runs, newest first; a run whose process died shows `interrupted` with `died`. */
  readonly runs: (RunRecord | (Omit<RunRecord, 'status'> & { status: 'interrupted'; died: string }))[]
  /** Items a dead process left `sent`: nobody is sending them; the next run takes them over. */
  readonly inFlightWhenDied: number
  readonly retentionEdge: StatusRetentionEdge
  readonly updates: StatusUpdates
  readonly updateLane: UpdateKindReport[]
  /** The files lane (issue 27): files by state, bytes, messages waiting on files; absent when the job has no files. */
  readonly files?: FileCounts
}

export function statusSnapshot(
  readings: StatusReadings,
  jobId: string,
  config: Pick<ResolvedConfig, 'target' | 'policies'>,
  options: { now?: number } = {},
): StatusSnapshot {
  const { quota, chatQuota, appId } = config.target
  const now = options.now ?? Date.now()
  const report = buildReport(readings.entityStats, quota)
  const runs = readings.runs.map((r) => {
    const died = deadRunReason(r, now)
    return died !== undefined ? { ...r, status: 'interrupted' as const, died } : r
  })
  const inFlight = report.reduce((n, s) => n + s.sent, 0)
  const orphaned = runs[0] !== undefined && 'died' in runs[0] && !runs.some((r) => r.status === 'running') ? inFlight : 0
  const retentionEdge = statusRetentionEdge(readings.openMessagesPerMinute, config, report, now)
  const updates = statusUpdates(readings)
  const files = readings.fileCounts
  const anyFiles = files.planned + files.copied + files.failed + files.skipped > 0
  return {
    jobId,
    appId,
    quota,
    chatQuota,
    entities: report,
    runs,
    inFlightWhenDied: orphaned,
    retentionEdge,
    updates,
    updateLane: updateReport(updates.byKind),
    ...(anyFiles ? { files } : {}),
  }
}
