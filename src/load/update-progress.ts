/**
 * The update lane in `status`, the progress lines and the command summaries: the ledger's update
 * counts (store.updatePlan.counts: per entity, kind, policy and status) folded per kind, and the
 * table `status` prints. Pure.
 */

/** One row of the ledger's update counts. */
export interface UpdateCountInput {
  readonly entity: string
  readonly kind: string
  readonly status: string
  readonly n: number
}

/** Where the updates of one kind stand. */
export interface UpdateKindReport {
  kind: string
  /** Waiting for the lane. */
  planned: number
  /** Sent, not settled yet (in flight, or left by a crash: checked before it is sent again). */
  inFlight: number
  done: number
  rejected: number
  /** Counted only, by policy (`report`). */
  reported: number
  ignored: number
  /** Replaced by a newer change of the same kind before it was sent. */
  superseded: number
  /** Not applied: the item changed on the platform after chatferry last wrote it (`changes.conflicts: report`). */
  conflict: number
  /** Dropped for the same reason under `changes.conflicts: platform-wins`. */
  dropped: number
  /** planned + in flight. */
  remaining: number
}

const empty = (kind: string): UpdateKindReport => ({
  kind,
  planned: 0,
  inFlight: 0,
  done: 0,
  rejected: 0,
  reported: 0,
  ignored: 0,
  superseded: 0,
  conflict: 0,
  dropped: 0,
  remaining: 0,
})

const FIELD: Record<string, keyof Omit<UpdateKindReport, 'kind' | 'remaining'>> = {
  planned: 'planned',
  sent: 'inFlight',
  done: 'done',
  rejected: 'rejected',
  reported: 'reported',
  ignored: 'ignored',
  superseded: 'superseded',
  conflict: 'conflict',
  dropped: 'dropped',
}

/** The counts folded per kind, in kind order. */
export function updateReport(rows: readonly UpdateCountInput[]): UpdateKindReport[] {
  const byKind = new Map<string, UpdateKindReport>()
  for (const r of rows) {
    const field = FIELD[r.status]
    if (field === undefined) {
      continue
    }
    const k = byKind.get(r.kind) ?? empty(r.kind)
    k[field] += Number(r.n)
    k.remaining = k.planned + k.inFlight
    byKind.set(r.kind, k)
  }
  return [...byKind.values()].sort((a, b) => (a.kind < b.kind ? -1 : a.kind > b.kind ? 1 : 0))
}

/** Every kind added up (kind `all`). */
export function updateTotals(report: readonly UpdateKindReport[]): UpdateKindReport {
  const total = empty('all')
  for (const k of report) {
    for (const f of Object.values(FIELD)) {
      total[f] += k[f]
    }
  }
  total.remaining = total.planned + total.inFlight
  return total
}

const n = (v: number) => v.toLocaleString('en-US')

/** The update lane's table for `status`: one row per kind (nothing when there are no updates). */
export function formatUpdateTable(report: readonly UpdateKindReport[]): string {
  if (report.length === 0) {
    return ''
  }
  const header = ['update', 'planned', 'in flight', 'done', 'rejected', 'reported', 'ignored', 'superseded', 'conflict', 'dropped', 'remaining']
  const rows = report.map((r) => [
    r.kind,
    ...[r.planned, r.inFlight, r.done, r.rejected, r.reported, r.ignored, r.superseded, r.conflict, r.dropped, r.remaining].map(n),
  ])
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  return [line(header), ...rows.map(line)].join('\n')
}
