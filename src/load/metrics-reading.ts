/**
 * What a metrics scrape reads of one job in the ledger (src/load/metrics.ts's gauges; a fleet
 * reads the files part per tenant): the items per entity and state, the files lane's counts, each
 * entity's watermark (the newest change read from the source) and when the last delta run ended.
 * A handful of queries, run when Prometheus scrapes, never on the loader's path; the items count is
 * a scan of the job's items (seconds on a job of millions), which is why metrics.ts paces them.
 */
import type { CursorRow, EntityStats, FileCounts, LedgerStore } from '../state/index.ts'

export interface JobMetricsReading {
  readonly stats: readonly EntityStats[]
  /** Undefined when the job has no files (the files gauges are left out). */
  readonly files: FileCounts | undefined
  /** Epoch ms of the newest source change read, per entity that has a watermark. */
  readonly watermarks: ReadonlyMap<string, number>
  /** The newest delta run that ended without failing: when, and how; undefined before the first. */
  readonly lastDelta: { readonly finishedAt: Date; readonly status: string } | undefined
}

export type MetricsLedger = Pick<LedgerStore, 'entityStats' | 'listCursors' | 'listRuns'> & { readonly files: Pick<LedgerStore['files'], 'counts'> }

/** Runs a delta ended with: it read the source to the end (`rejected`: some rows were refused, the read completed). */
const DELTA_ENDED = new Set(['succeeded', 'rejected'])

export async function readJobMetrics(store: MetricsLedger, jobId: string): Promise<JobMetricsReading> {
  const [stats, files, cursors, deltas] = await Promise.all([
    store.entityStats(jobId),
    jobFiles(store, jobId),
    store.listCursors(jobId),
    store.listRuns(jobId, 20, ['delta']),
  ])
  const last = deltas.find((r) => DELTA_ENDED.has(r.status) && r.finishedAt !== null)
  const lastDelta = last?.finishedAt ? { finishedAt: last.finishedAt, status: last.status } : undefined
  return { stats, files, watermarks: watermarksOf(cursors), lastDelta }
}

/** The job's file counts, or undefined when it has none. */
export async function jobFiles(store: Pick<MetricsLedger, 'files'>, jobId: string): Promise<FileCounts | undefined> {
  const f = await store.files.counts(jobId)
  return f.planned + f.copied + f.failed + f.skipped > 0 ? f : undefined
}

function watermarksOf(cursors: readonly CursorRow[]): Map<string, number> {
  const out = new Map<string, number>()
  for (const c of cursors) {
    if (typeof c.watermark === 'number' && Number.isFinite(c.watermark)) {
      out.set(c.entity, c.watermark)
    }
  }
  return out
}
