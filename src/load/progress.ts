/**
 * Status and progress: per entity counts, achieved rate against the quota, ETA at the quota; as a
 * table for people and as JSON for machines. The live line per entity on a terminal is the
 * commands' (src/cli/progress-drawer.ts).
 */
import { formatDuration } from '../format-duration.ts'
import type { EntityStats } from '../state/store.ts'

export interface QuotaInfo {
  readonly requestsPerMinute: number
  readonly itemsPerRequest: number
}

/** One entity's status, with rates and the ETA derived. */
export interface EntityReport extends EntityStats {
  /** Items per minute the quota allows. */
  quotaItemsPerMinute: number
  /** Items done in the last minute ÷ what the quota allows. */
  rateVsQuota: number
  /** Seconds to finish the remaining items at the quota. */
  etaSecondsAtQuota: number
}

export function buildReport(stats: readonly EntityStats[], quota: QuotaInfo): EntityReport[] {
  const perMinute = quota.requestsPerMinute * quota.itemsPerRequest
  return stats.map((s) => ({
    ...s,
    quotaItemsPerMinute: perMinute,
    rateVsQuota: perMinute > 0 ? s.itemsLastMinute / perMinute : 0,
    etaSecondsAtQuota: perMinute > 0 ? Math.ceil((s.remaining / perMinute) * 60) : 0,
  }))
}

const n = (v: number) => v.toLocaleString('en-US')

/** A fixed-width table, one row per entity. */
export function formatStatusTable(report: readonly EntityReport[]): string {
  const header = [
    'entity',
    'planned',
    'in flight',
    'done',
    'created',
    'present',
    'skipped',
    'rejected',
    'remaining',
    'requests',
    '429s',
    'rate/quota',
    'ETA@quota',
  ]
  const rows = report.map((r) => [
    r.entity,
    n(r.planned),
    n(r.sent),
    n(r.done),
    n(r.created),
    n(r.alreadyPresent),
    n(r.skipped),
    n(r.rejected),
    n(r.remaining),
    n(r.requests),
    n(r.rateLimited),
    `${(r.rateVsQuota * 100).toFixed(0)}%`,
    r.remaining === 0 ? '-' : formatDuration(r.etaSecondsAtQuota),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  const changed = report.filter((r) => r.loadedButChanged > 0).map((r) => `${r.entity}: ${n(r.loadedButChanged)}`)
  return [
    line(header),
    ...rows.map(line),
    ...(changed.length ? [`loaded but changed in the source since (not resent): ${changed.join(', ')}`] : []),
  ].join('\n')
}
