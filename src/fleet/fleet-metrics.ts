/**
 * The Prometheus metrics of a fleet process (`fleet run`, `fleet worker`), one registry per
 * process (prom-client), labelled `fleet` and, per tenant, `tenant` and `job_id` — the names of a
 * single job's metrics (src/load/metrics.ts), so the same dashboard and alert rules
 * (deploy/monitoring/) work per tenant. What this process's loaders did (requests, 429s and pauses,
 * items and batches by outcome, ledger errors, reported once a second through the loader's
 * `onTick`) are counters, and so are the process's platform requests by endpoint and outcome
 * (src/load/request-metrics.ts, no tenant label); where each tenant stands in the ledger (items per
 * entity and state, done in the last minute, its files by state and bytes, its state as
 * `fleet status` says it, its quota) are gauges read when Prometheus scrapes, never on a loader's
 * path. Served by src/cli/metrics-server.ts; no key or URL is ever a label.
 */
import type { Gauge, Registry } from 'prom-client'

import type { LoaderCounters } from '../load/loader.ts'
import { FILE_STATES, registerProcessGauges } from '../load/metrics.ts'
import { promClient } from '../load/prom-client.ts'
import { registerRequestMetrics } from '../load/request-metrics.ts'
import type { EntityStats, FileCounts } from '../state/index.ts'
import { TENANT_LOAD_STATES, type TenantStatus } from './fleet-status.ts'

export interface FleetMetrics {
  readonly registry: Registry
  /** A tenant's loader counters now (cumulative for that loader; a new loader starts again from 0). */
  onTick(tenant: { tenantId: string; jobId: string }, counters: LoaderCounters): void
  /** Stops counting this process's platform requests. */
  close(): void
}

/** What a scrape reads of the ledger: every tenant's `fleet status` line and its items per entity. */
export interface FleetLedgerReading {
  readonly tenants: readonly TenantStatus[]
  readonly stats: ReadonlyMap<string, readonly EntityStats[]>
  /** Each tenant's files lane counts (absent: the tenant has no files). */
  readonly files?: ReadonlyMap<string, FileCounts | undefined>
}

const ITEM_STATES = ['planned', 'sent', 'done', 'skipped', 'rejected'] as const
const TICKED = [
  'requests',
  'rateLimited',
  'itemsDone',
  'itemsRejected',
  'itemsRequeued',
  'batchesSettled',
  'batchesSplit',
  'batchesReleased',
  'fenced',
  'pauses',
  'pausedMs',
  'ledgerErrors',
] as const

export function createFleetMetrics(options: {
  fleetId: string
  read: () => Promise<FleetLedgerReading>
  onLedgerError?: (err: unknown) => void
}): FleetMetrics {
  const { Counter, Gauge, Registry } = promClient()
  const registry = new Registry()
  registry.setDefaultLabels({ fleet: options.fleetId })
  registerProcessGauges(registry)
  const stopRequests = registerRequestMetrics(registry)
  const tenantLabels = ['job_id', 'tenant']
  const counter = (name: string, help: string, extra: string[] = []) =>
    new Counter({ name, help, labelNames: [...tenantLabels, ...extra], registers: [registry] })
  const requests = counter('chatferry_loader_requests_total', 'Import requests this process sent, per tenant')
  const rateLimited = counter('chatferry_loader_rate_limited_total', "Import requests answered 429, per tenant (each pauses the tenant's loaders)")
  const items = counter('chatferry_loader_items_total', 'Items this process settled, per tenant and outcome', ['outcome'])
  const batches = counter('chatferry_loader_batches_total', 'Batches this process settled, split or released, per tenant', ['outcome'])
  const fenced = counter('chatferry_loader_fenced_total', 'Batches this process lost to another worker (lease expired), per tenant')
  const pauses = counter('chatferry_loader_pauses_total', "Pauses of a tenant's import budget this process made after a 429")
  const paused = counter('chatferry_loader_paused_seconds_total', 'Seconds of those pauses, per tenant')
  const loaderLedgerErrors = counter(
    'chatferry_loader_ledger_errors_total',
    "Ledger operations of a tenant's loader that failed (claiming, packing, settling); retried",
  )
  const ledgerErrors = new Counter({ name: 'chatferry_ledger_read_errors_total', help: 'Scrapes whose ledger read failed', registers: [registry] })

  // One ledger reading per scrape, shared by every gauge of that scrape.
  let reading: Promise<FleetLedgerReading> | undefined
  const read = () => {
    reading ??= options.read().finally(() => setTimeout(() => (reading = undefined), 500).unref())
    return reading
  }
  const ledgerGauge = (name: string, help: string, labelNames: string[], fill: (g: Gauge, r: FleetLedgerReading) => void) =>
    new Gauge({
      name,
      help,
      labelNames: [...tenantLabels, ...labelNames],
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
  const of = (t: TenantStatus) => ({ job_id: t.jobId, tenant: t.tenantId })
  ledgerGauge('chatferry_items', 'Items of each tenant in the ledger, by entity and state', ['entity', 'state'], (g, r) => {
    for (const t of r.tenants) {
      for (const s of r.stats.get(t.jobId) ?? []) {
        for (const state of ITEM_STATES) {
          g.set({ ...of(t), entity: s.entity, state }, s[state])
        }
      }
    }
  })
  ledgerGauge('chatferry_items_last_minute', 'Items settled done in the last minute, per tenant and entity (all processes)', ['entity'], (g, r) => {
    for (const t of r.tenants) {
      for (const s of r.stats.get(t.jobId) ?? []) {
        g.set({ ...of(t), entity: s.entity }, s.itemsLastMinute)
      }
    }
  })
  ledgerGauge('chatferry_quota_items_per_minute', "Items per minute each tenant's app quota allows", [], (g, r) => {
    for (const t of r.tenants) {
      g.set(of(t), t.quotaItemsPerMinute)
    }
  })
  ledgerGauge('chatferry_quota_used_ratio', "Items done in the last minute over what the tenant's quota allows", [], (g, r) => {
    for (const t of r.tenants) {
      g.set(of(t), t.rateVsQuota)
    }
  })
  ledgerGauge('chatferry_files', 'Files of each tenant in the ledger, by state (tenants with files)', ['state'], (g, r) => {
    for (const t of r.tenants) {
      const f = r.files?.get(t.jobId)
      for (const state of f === undefined ? [] : FILE_STATES) {
        g.set({ ...of(t), state }, f![state])
      }
    }
  })
  ledgerGauge('chatferry_files_bytes', "Bytes of each tenant's files: copied, planned (expected)", ['state'], (g, r) => {
    for (const t of r.tenants) {
      const f = r.files?.get(t.jobId)
      if (f !== undefined) {
        g.set({ ...of(t), state: 'copied' }, f.copiedBytes)
        g.set({ ...of(t), state: 'planned' }, f.plannedBytes)
      }
    }
  })
  ledgerGauge('chatferry_fleet_tenant_state', "Each tenant's state as fleet status says it: 1 for its state, 0 for the others", ['state'], (g, r) => {
    for (const t of r.tenants) {
      for (const state of TENANT_LOAD_STATES) {
        g.set({ ...of(t), state }, t.state === state ? 1 : 0)
      }
    }
  })

  const last = new Map<string, LoaderCounters>()
  return {
    registry,
    onTick(tenant, c) {
      const labels = { job_id: tenant.jobId, tenant: tenant.tenantId }
      let before = last.get(tenant.jobId)
      // A new loader of the tenant counts from 0 again.
      if (before !== undefined && TICKED.some((k) => c[k] < before![k])) {
        before = undefined
      }
      const d = (k: (typeof TICKED)[number]) => Math.max(0, c[k] - (before?.[k] ?? 0))
      requests.inc(labels, d('requests'))
      rateLimited.inc(labels, d('rateLimited'))
      items.inc({ ...labels, outcome: 'done' }, d('itemsDone'))
      items.inc({ ...labels, outcome: 'rejected' }, d('itemsRejected'))
      items.inc({ ...labels, outcome: 'requeued' }, d('itemsRequeued'))
      batches.inc({ ...labels, outcome: 'settled' }, d('batchesSettled'))
      batches.inc({ ...labels, outcome: 'split' }, d('batchesSplit'))
      batches.inc({ ...labels, outcome: 'released' }, d('batchesReleased'))
      fenced.inc(labels, d('fenced'))
      pauses.inc(labels, d('pauses'))
      paused.inc(labels, d('pausedMs') / 1000)
      loaderLedgerErrors.inc(labels, d('ledgerErrors'))
      last.set(tenant.jobId, { ...c })
    },
    close: stopRequests,
  }
}
