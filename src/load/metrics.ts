/**
 * The loader's Prometheus metrics (prom-client), in one registry per process: what the loader
 * did (its counters, reported once a second through `onTick`) as counters, and where the job
 * stands in the ledger (items per entity and state, requests and items of the last minute, the
 * quota) as gauges read from the ledger when Prometheus scrapes, not on the loader's path. Served
 * by src/cli/metrics-server.ts when `metrics.port` is set; nothing here sends anything.
 */
import { Counter, Gauge, Registry } from 'prom-client'

import type { EntityStats } from '../state/store.ts'
import type { LoaderCounters } from './loader.ts'

export interface LoaderMetrics {
  readonly registry: Registry
  /** The loader's counters now (cumulative for this process): the counters grow by the difference. */
  onTick(counters: LoaderCounters): void
}

const ITEM_STATES = ['planned', 'sent', 'done', 'skipped', 'rejected'] as const

export function createLoaderMetrics(options: {
  jobId: string
  appId: string
  quota: { requestsPerMinute: number; itemsPerRequest: number }
  /** The ledger's per-entity counts (read at each scrape). */
  stats: () => Promise<EntityStats[]>
  /** Called when the ledger could not be read for a scrape. */
  onLedgerError?: (err: unknown) => void
}): LoaderMetrics {
  const registry = new Registry()
  registry.setDefaultLabels({ job_id: options.jobId, app_id: options.appId })
  registerProcessGauges(registry)
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames, registers: [registry] })
  const requests = counter('chatferry_loader_requests_total', 'Import requests this process sent')
  const rateLimited = counter('chatferry_loader_rate_limited_total', 'Import requests answered 429 (each pauses every process)')
  const items = counter('chatferry_loader_items_total', 'Items this process settled, by outcome', ['outcome'])
  const batches = counter('chatferry_loader_batches_total', 'Batches this process settled, split or released', ['outcome'])
  const readBacks = counter('chatferry_loader_read_backs_total', 'Message batches read back after a bad-row 500')
  const chat = counter('chatferry_loader_chat_requests_total', 'Chat-interface requests of the read-backs')
  const fenced = counter('chatferry_loader_fenced_total', 'Batches this process lost to another worker (lease expired)')
  const ledgerErrors = counter('chatferry_ledger_read_errors_total', 'Scrapes whose ledger read failed')
  let last: LoaderCounters | undefined
  const quotaPerMinute = options.quota.requestsPerMinute * options.quota.itemsPerRequest
  new Gauge({
    name: 'chatferry_quota_items_per_minute',
    help: 'Items per minute the import quota allows',
    registers: [registry],
    collect() {
      this.set(quotaPerMinute)
    },
  })
  const ledgerGauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, stats: EntityStats[]) => void) =>
    new Gauge({
      name,
      help,
      labelNames,
      registers: [registry],
      async collect() {
        try {
          const stats = await options.stats()
          this.reset()
          fill(this, stats)
        } catch (err) {
          ledgerErrors.inc()
          options.onLedgerError?.(err)
        }
      },
    })
  ledgerGauge('chatferry_items', 'Items of the job in the ledger, by entity and state', ['entity', 'state'], (g, stats) => {
    for (const s of stats) {
      for (const state of ITEM_STATES) {
        g.set({ entity: s.entity, state }, s[state])
      }
    }
  })
  ledgerGauge('chatferry_items_last_minute', 'Items settled done in the last minute, by entity (all processes)', ['entity'], (g, stats) => {
    for (const s of stats) {
      g.set({ entity: s.entity }, s.itemsLastMinute)
    }
  })
  ledgerGauge(
    'chatferry_quota_used_ratio',
    'Items done in the last minute over what the quota allows (all entities, all processes)',
    [],
    (g, stats) => g.set(quotaPerMinute > 0 ? stats.reduce((a, s) => a + s.itemsLastMinute, 0) / quotaPerMinute : 0),
  )
  return {
    registry,
    onTick(c) {
      const d = (k: keyof LoaderCounters) => Math.max(0, Number(c[k] ?? 0) - Number(last?.[k] ?? 0))
      requests.inc(d('requests'))
      rateLimited.inc(d('rateLimited'))
      items.inc({ outcome: 'done' }, d('itemsDone'))
      items.inc({ outcome: 'rejected' }, d('itemsRejected'))
      items.inc({ outcome: 'requeued' }, d('itemsRequeued'))
      items.inc({ outcome: 'aged_out' }, d('itemsAgedOut'))
      batches.inc({ outcome: 'settled' }, d('batchesSettled'))
      batches.inc({ outcome: 'split' }, d('batchesSplit'))
      batches.inc({ outcome: 'released' }, d('batchesReleased'))
      readBacks.inc(d('readBacks'))
      chat.inc(d('chatRequests'))
      fenced.inc(d('fenced'))
      last = { ...c }
    },
  }
}

/**
 * The process's own cost (CPU seconds, resident memory) in `registry`, read at the scrape only:
 * prom-client's default metrics keep a GC observer and an event-loop monitor running all the time,
 * which is not for the loader's path. Every chatferry metrics endpoint registers these.
 */
export function registerProcessGauges(registry: Registry): void {
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
