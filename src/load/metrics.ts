/**
 * The loader's Prometheus metrics (prom-client), in one registry per process: what the lanes did
 * as counters (lane-counter-metrics.ts, the same a fleet's registry has per tenant), reported once a
 * second — the import loader's through `onTick`, the files lane's through `onFilesTick`, the update
 * lane's (its ledger errors) through `onUpdatesTick` —, every platform request by endpoint and outcome
 * (request-metrics.ts), and where the job stands in the ledger (items per entity and state,
 * requests and items of the last minute, the quota, the files lane, the lag behind the source) as
 * gauges read from the ledger when Prometheus scrapes (metrics-reading.ts; a reading serves the
 * scrapes of the next 20 times what it took, src/paced-reading.ts), not on the loader's path.
 * Served by src/cli/metrics-server.ts when `metrics.port` is set; nothing here sends anything.
 */
import type { Gauge, Registry } from 'prom-client'

import type { FilesLaneCounters } from '../files/lane/files-lane.ts'
import { pacedReading } from '../paced-reading.ts'
import { registerLaneCounters } from './lane-counter-metrics.ts'
import type { LoaderCounters } from './loader-types.ts'
import type { JobMetricsReading } from './metrics-reading.ts'
import { promClient } from './prom-client.ts'
import { registerRequestMetrics } from './request-metrics.ts'
import type { UpdateLaneCounters } from './update-lane-run.ts'

export interface LoaderMetrics {
  readonly registry: Registry
  /** The import loader's counters now (cumulative for that loader): the counters grow by the difference. */
  onTick(counters: LoaderCounters): void
  /** The files lane's counters now (cumulative for that lane). */
  onFilesTick(counters: FilesLaneCounters): void
  /** The update lane's counters now (cumulative for that lane): its ledger errors are counted. */
  onUpdatesTick(counters: UpdateLaneCounters): void
  /** Stops counting this process's platform requests. */
  close(): void
}

/** A scrape's ledger reading serves the scrapes of the next 0.5 s at least (every gauge of one scrape). */
export const SCRAPE_READING_GAP_MS = 500

const ITEM_STATES = ['planned', 'sent', 'done', 'skipped', 'rejected'] as const
export const FILE_STATES = ['planned', 'copied', 'failed', 'skipped'] as const

export function createLoaderMetrics(options: {
  jobId: string
  appId: string
  quota: { requestsPerMinute: number; itemsPerRequest: number }
  /** The ledger's view of the job (read at each scrape, once for all its gauges). */
  read: () => Promise<JobMetricsReading>
  /** Called when the ledger could not be read for a scrape. */
  onLedgerError?: (err: unknown) => void
  now?: () => number
}): LoaderMetrics {
  const { Counter, Gauge, Registry } = promClient()
  const now = options.now ?? Date.now
  const registry = new Registry()
  registry.setDefaultLabels({ job_id: options.jobId, app_id: options.appId })
  registerProcessGauges(registry)
  const stopRequests = registerRequestMetrics(registry)
  const lanes = registerLaneCounters(registry, [])
  const ledgerErrors = new Counter({ name: 'chatferry_ledger_read_errors_total', help: 'Scrapes whose ledger read failed', registers: [registry] })
  const quotaPerMinute = options.quota.requestsPerMinute * options.quota.itemsPerRequest
  new Gauge({
    name: 'chatferry_quota_items_per_minute',
    help: 'Items per minute the import quota allows',
    registers: [registry],
    collect() {
      this.set(quotaPerMinute)
    },
  })
  // One ledger reading per scrape, shared by every gauge of that scrape; on a large job, one per
  // 20 times what a reading takes (src/paced-reading.ts): the scrape answers at once from the last.
  const read = pacedReading(options.read, { minGapMs: SCRAPE_READING_GAP_MS }).get
  const ledgerGauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, r: JobMetricsReading) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        try {
          const r = await read()
          this.reset()
          fill(this, r)
        } catch (err) {
          if (name === 'chatferry_items') {
            ledgerErrors.inc()
            options.onLedgerError?.(err)
          }
        }
      },
    })
  ledgerGauge('chatferry_items', 'Items of the job in the ledger, by entity and state', ['entity', 'state'], (g, r) => {
    for (const s of r.stats) {
      for (const state of ITEM_STATES) {
        g.set({ entity: s.entity, state }, s[state])
      }
    }
  })
  ledgerGauge('chatferry_items_last_minute', 'Items settled done in the last minute, by entity (all processes)', ['entity'], (g, r) => {
    for (const s of r.stats) {
      g.set({ entity: s.entity }, s.itemsLastMinute)
    }
  })
  ledgerGauge('chatferry_quota_used_ratio', 'Items done in the last minute over what the quota allows (all entities, all processes)', [], (g, r) =>
    g.set(quotaPerMinute > 0 ? r.stats.reduce((a, s) => a + s.itemsLastMinute, 0) / quotaPerMinute : 0),
  )
  registerFilesGauges(ledgerGauge)
  ledgerGauge(
    'chatferry_source_lag_seconds',
    "Seconds since the newest change read from the source (the entity's watermark): how far the ledger trails a busy source",
    ['entity'],
    (g, r) => {
      for (const [entity, at] of r.watermarks) {
        g.set({ entity }, Math.max(0, (now() - at) / 1000))
      }
    },
  )
  ledgerGauge(
    'chatferry_delta_last_finished_age_seconds',
    'Seconds since the last delta run (run --delta) finished, labelled with how it ended (succeeded, rejected); absent before the first',
    ['status'],
    (g, r) => {
      if (r.lastDelta !== undefined) {
        g.set({ status: r.lastDelta.status }, Math.max(0, (now() - r.lastDelta.finishedAt.getTime()) / 1000))
      }
    },
  )
  return {
    registry,
    onTick: (c) => lanes.onTick({}, c),
    onFilesTick: (c) => lanes.onFilesTick({}, c),
    onUpdatesTick: (c) => lanes.onUpdatesTick({}, c),
    close: stopRequests,
  }
}

/** The files lane's gauges of a job (`chatferry_files`, `chatferry_files_bytes`, `chatferry_files_waiting_messages`); absent when it has no files. */
function registerFilesGauges(
  ledgerGauge: (name: string, help: string, labelNames: string[], fill: (g: Gauge, r: JobMetricsReading) => void) => Gauge,
): void {
  ledgerGauge('chatferry_files', 'Files of the job in the ledger, by state (the files lane; absent when the job has none)', ['state'], (g, r) => {
    for (const state of FILE_STATES) {
      if (r.files !== undefined) {
        g.set({ state }, r.files[state])
      }
    }
  })
  ledgerGauge(
    'chatferry_files_bytes',
    "Bytes of the job's files: copied (what the store holds), planned (expected, when the source said)",
    ['state'],
    (g, r) => {
      if (r.files !== undefined) {
        g.set({ state: 'copied' }, r.files.copiedBytes)
        g.set({ state: 'planned' }, r.files.plannedBytes)
      }
    },
  )
  ledgerGauge(
    'chatferry_files_waiting_messages',
    'Planned messages held by a file not copied yet, or failed under files.onFailure wait',
    [],
    (g, r) => {
      if (r.files !== undefined) {
        g.set(r.files.waitingMessages)
      }
    },
  )
}

/**
 * The process's own cost (CPU seconds, resident memory) in `registry`, read at the scrape only:
 * prom-client's default metrics keep a GC observer and an event-loop monitor running all the time,
 * which is not for the loader's path. Every chatferry metrics endpoint registers these.
 */
export function registerProcessGauges(registry: Registry): void {
  const { Gauge } = promClient()
  new Gauge({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU seconds of this process',
    registers: [registry],
    collect() {
      const u = process.cpuUsage()
      this.set((u.user + u.system) / 1e6)
    },
  })
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory of this process',
    registers: [registry],
    collect() {
      this.set(process.memoryUsage.rss())
    },
  })
}
