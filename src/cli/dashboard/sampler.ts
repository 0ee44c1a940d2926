/**
 * The dashboard's view of one job, refreshed on a timer: the job's status snapshot (the same
 * function `status --json` prints, src/cli/status-snapshot.ts), its rejects by code with a few
 * samples each, and the throughput series the chart draws (items settled in the last minute, one
 * point per reading, kept in memory for as long as the dashboard runs). However many pages are
 * open, the ledger is read once per interval at most: a page asks for the last view, never the
 * ledger. On a large job a reading is paced by src/paced-reading.ts (the next one waits 20 times
 * what the last took, so a dashboard left open costs the migration's ledger at most 1/20 of a
 * core), and the view says how often it is read.
 */
import type { ResolvedConfig } from '../../job/config.ts'
import { pacedReading } from '../../paced-reading.ts'
import { type StatusSnapshot, statusSnapshot } from '../status-snapshot.ts'
import type { LedgerSource } from './ledger-source.ts'

export interface RejectReason {
  readonly code: string
  readonly count: number
  /** Up to {@link SAMPLES_PER_REASON} rejected items of this code: entity, legacy id, message. */
  readonly samples: { entity: string; legacyId: string; message: string }[]
}

export interface ThroughputPoint {
  /** Epoch milliseconds of the reading. */
  readonly t: number
  /** Items settled done in the minute before `t`, all entities. */
  readonly itemsPerMinute: number
  readonly done: number
}

export interface DashboardView {
  readonly at: string
  readonly status: StatusSnapshot
  readonly quotaItemsPerMinute: number
  /** Seconds to finish what remains at the rate of the last minute; null when nothing moved. */
  readonly etaSecondsObserved: number | null
  readonly etaSecondsAtQuota: number
  readonly rejects: { readonly listed: number; readonly capped: boolean; readonly reasons: RejectReason[] }
  readonly series: ThroughputPoint[]
  /** How the ledger was reached (or why the view is not refreshing). */
  readonly via: string
  /** The last reading's failure (the ledger could not be read); the view is the one before. */
  readonly error?: string
}

export const SAMPLES_PER_REASON = 3
/** Rejected items read per refresh to group by code (the counts per entity are the snapshot's, exact). */
export const REJECTS_READ = 5000
/** Points kept: a week at one a minute would be 10 080; past this the oldest half is thinned. */
const MAX_POINTS = 4000

export interface Sampler {
  current(): DashboardView | undefined
  /** Reads the ledger now (the timer calls it; the first reading is awaited before serving). */
  refresh(): Promise<void>
  stop(): void
}

export function startSampler(source: LedgerSource, jobId: string, config: Pick<ResolvedConfig, 'target' | 'policies'>, intervalMs: number): Sampler {
  let view: DashboardView | undefined
  let series: ThroughputPoint[] = []
  let running: Promise<void> | undefined
  const ledger = pacedReading(() => source.read({ runs: 20, rejects: REJECTS_READ }), {
    minGapMs: intervalMs,
    // Opening an embedded store nobody holds is not the ledger's work: it does not slow the cadence.
    costOf: (r, ms) => (r?.opened === true ? 0 : ms),
  })
  let shown: Awaited<ReturnType<LedgerSource['read']>> | null = null
  const read = async () => {
    try {
      const read = await ledger.get()
      if (read !== undefined && read === shown) {
        return // the last reading is still current: paced, no new point
      }
      shown = read
      if (read === undefined) {
        if (view !== undefined) {
          view = { ...view, via: `no process holds the embedded store: the reading of ${view.at}` }
        }
        return
      }
      const status = statusSnapshot(read.readings, jobId, config)
      const rejected = read.readings.rejects
      const done = status.entities.reduce((n, e) => n + e.done, 0)
      const perMinute = status.entities.reduce((n, e) => n + e.itemsLastMinute, 0)
      const remaining = status.entities.reduce((n, e) => n + e.remaining, 0)
      const quotaPerMinute = status.quota.requestsPerMinute * status.quota.itemsPerRequest
      series = thinned([...series, { t: Date.now(), itemsPerMinute: perMinute, done }])
      view = {
        at: new Date().toISOString(),
        status,
        quotaItemsPerMinute: quotaPerMinute,
        etaSecondsObserved: perMinute > 0 ? Math.ceil((remaining / perMinute) * 60) : remaining === 0 ? 0 : null,
        etaSecondsAtQuota: quotaPerMinute > 0 ? Math.ceil((remaining / quotaPerMinute) * 60) : 0,
        rejects: { listed: rejected.length, capped: rejected.length >= REJECTS_READ, reasons: byReason(rejected) },
        series,
        via: pacedVia(read.via, ledger.gapMs(), intervalMs),
      }
    } catch (err) {
      if (view !== undefined) {
        view = { ...view, error: scrubUrls(err instanceof Error ? err.message : String(err)) }
      } else {
        throw err
      }
    }
  }
  const refresh = () => (running ??= read().finally(() => (running = undefined)))
  const timer = setInterval(() => void refresh().catch(() => {}), intervalMs)
  timer.unref()
  return { current: () => view, refresh, stop: () => clearInterval(timer) }
}

/** How the ledger was reached, and how often it is read when its pacing reads it less often than the page refreshes. */
export function pacedVia(via: string, gapMs: number, intervalMs: number): string {
  return gapMs > intervalMs ? `${via}; read every ${Math.round(gapMs / 1000)} s (a reading is slow on a job this size)` : via
}

function byReason(rejected: readonly { entity: string; legacyId: string; code: string | null; message: string | null }[]): RejectReason[] {
  const out = new Map<string, { code: string; count: number; samples: RejectReason['samples'] }>()
  for (const r of rejected) {
    const code = r.code ?? 'unknown'
    const reason = out.get(code) ?? { code, count: 0, samples: [] }
    reason.count++
    if (reason.samples.length < SAMPLES_PER_REASON) {
      reason.samples.push({ entity: r.entity, legacyId: r.legacyId, message: (r.message ?? '').slice(0, 300) })
    }
    out.set(code, reason)
  }
  return [...out.values()].sort((a, b) => b.count - a.count)
}

/** The series with its oldest half thinned to every other point once it passes {@link MAX_POINTS}. */
export function thinned(series: ThroughputPoint[]): ThroughputPoint[] {
  if (series.length <= MAX_POINTS) {
    return series
  }
  const half = Math.floor(MAX_POINTS / 2)
  return [...series.slice(0, half).filter((_, i) => i % 2 === 0), ...series.slice(half)]
}

/** An error's text with any URL's credentials hidden (a connection error may quote its URL). */
export function scrubUrls(text: string): string {
  return text.replace(/\/\/([^:/@\s]+):[^@\s]*@/g, '//$1:***@')
}
