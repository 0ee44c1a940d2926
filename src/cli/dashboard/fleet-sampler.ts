/**
 * The fleet dashboard's view, refreshed on a timer: every tenant's line of `fleet status` (the
 * same function, src/cli/fleet-status-read.ts: state, done/remaining per entity, rate against its
 * app's quota, ETA, rejects, last error) with its files lane's counts, the fleet's totals, and the fleet's throughput series
 * (items done in the last minute, all tenants, one point per refresh, kept in memory). Read from
 * the ledger only: no fleet key, no app key, no source is opened. However many pages are open,
 * the ledger is read once per interval at most, paced on a large fleet as the job's dashboard is
 * (sampler.ts).
 */
import type { FleetFile } from '../../fleet/fleet-file.ts'
import { TENANT_LOAD_STATES, type TenantStatus } from '../../fleet/fleet-status.ts'
import { jobFiles } from '../../load/metrics-reading.ts'
import { pacedReading } from '../../paced-reading.ts'
import type { FileCounts, LedgerStore } from '../../state/index.ts'
import { readFleetStatus } from '../fleet-status-read.ts'
import { pacedVia, scrubUrls, thinned, type ThroughputPoint } from './sampler.ts'

export interface FleetDashboardView {
  readonly at: string
  readonly fleet: string
  readonly tenants: readonly TenantStatus[]
  /** Each tenant's files lane counts by job id, for the tenants that have files. */
  readonly files: Readonly<Record<string, FileCounts>>
  readonly totals: {
    readonly tenants: number
    /** Tenants per state, every state listed (0 when none). */
    readonly states: Readonly<Record<string, number>>
    readonly done: number
    readonly remaining: number
    readonly rejected: number
    readonly itemsLastMinute: number
    /** What the tenants' apps' quotas allow in a minute, together. */
    readonly quotaItemsPerMinute: number
  }
  /** Tenants of the fleet file left out because they were deprovisioned. */
  readonly deprovisioned: readonly string[]
  readonly series: ThroughputPoint[]
  readonly via: string
  /** The last reading's failure; the view is the one before. */
  readonly error?: string
}

export interface FleetSampler {
  current(): FleetDashboardView | undefined
  refresh(): Promise<void>
  stop(): void
}

export function startFleetSampler(fleet: FleetFile, store: LedgerStore, only: readonly string[], intervalMs: number): FleetSampler {
  let view: FleetDashboardView | undefined
  let series: ThroughputPoint[] = []
  let running: Promise<void> | undefined
  // Paced as the job's dashboard is (sampler.ts): a slow reading is not repeated at every refresh.
  const ledger = pacedReading(
    async () => {
      const reading = await readFleetStatus(fleet, store, only)
      const files: Record<string, FileCounts> = {}
      for (const t of reading.tenants) {
        const f = await jobFiles(store, t.jobId)
        if (f !== undefined) {
          files[t.jobId] = f
        }
      }
      return { reading, files }
    },
    { minGapMs: intervalMs },
  )
  let shown: unknown
  const read = async () => {
    try {
      const read = await ledger.get()
      if (read === shown) {
        return // the last reading is still current: paced, no new point
      }
      shown = read
      const { reading, files } = read
      const totals = fleetTotals(reading.tenants)
      series = thinned([...series, { t: Date.now(), itemsPerMinute: totals.itemsLastMinute, done: totals.done }])
      view = {
        at: new Date().toISOString(),
        fleet: reading.fleet,
        tenants: reading.tenants,
        files,
        totals,
        deprovisioned: reading.deprovisioned.map((d) => d.tenantId),
        series,
        via: pacedVia('Postgres ledger', ledger.gapMs(), intervalMs),
      }
    } catch (err) {
      if (view === undefined) {
        throw err
      }
      view = { ...view, error: scrubUrls(err instanceof Error ? err.message : String(err)) }
    }
  }
  const refresh = () => (running ??= read().finally(() => (running = undefined)))
  const timer = setInterval(() => void refresh().catch(() => {}), intervalMs)
  timer.unref()
  return { current: () => view, refresh, stop: () => clearInterval(timer) }
}

/** The fleet's totals over its tenants' lines. */
export function fleetTotals(tenants: readonly TenantStatus[]): FleetDashboardView['totals'] {
  const sum = (pick: (t: TenantStatus) => number) => tenants.reduce((a, t) => a + pick(t), 0)
  return {
    tenants: tenants.length,
    states: Object.fromEntries(TENANT_LOAD_STATES.map((s) => [s, tenants.filter((t) => t.state === s).length])),
    done: sum((t) => t.done),
    remaining: sum((t) => t.remaining),
    rejected: sum((t) => t.rejected),
    itemsLastMinute: sum((t) => t.itemsLastMinute),
    quotaItemsPerMinute: sum((t) => t.quotaItemsPerMinute),
  }
}
