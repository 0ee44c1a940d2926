/**
 * The Prometheus metrics of a fleet process (`fleet run`, `fleet worker`), one registry per
 * process (prom-client), labelled `fleet` and, per tenant, `tenant` and `job_id` — the names of a
 * single job's metrics (src/load/metrics.ts), so the same dashboard and alert rules
 * (deploy/monitoring/) work per tenant. What each tenant's lanes did in this process are a job's
 * counters (src/load/lane-counter-metrics.ts, defined once for both) with the tenant's labels: its
 * import loader's (requests, 429s and pauses, items and batches by outcome, read-backs, ledger
 * errors) through `onTick`, its files lane's copies and bytes through `onFilesTick`, its update
 * lane's ledger errors through `onUpdatesTick`, each reported once a second (the commands hand this
 * registry to `runFleet`/`serveFleet` as their `ticks`). So are the process's platform requests by endpoint and outcome
 * (src/load/request-metrics.ts, no tenant label); where each tenant stands in the ledger (items per
 * entity and state, done in the last minute, its files by state and bytes, its state as
 * `fleet status` says it, its quota) are gauges read when Prometheus scrapes, never on a loader's
 * path. Served by src/cli/metrics-server.ts; no key or URL is ever a label.
 */
import type { Gauge, Registry } from 'prom-client'

import type { FilesLaneCounters } from '../files/lane/files-lane.ts'
import { registerLaneCounters } from '../load/lane-counter-metrics.ts'
import type { LoaderCounters } from '../load/loader.ts'
import { FILE_STATES, registerProcessGauges, SCRAPE_READING_GAP_MS } from '../load/metrics.ts'
import { promClient } from '../load/prom-client.ts'
import { registerRequestMetrics } from '../load/request-metrics.ts'
import type { UpdateLaneCounters } from '../load/update-lane.ts'
import { pacedReading } from '../paced-reading.ts'
import type { EntityStats, FileCounts } from '../state/index.ts'
import { TENANT_LOAD_STATES, type TenantStatus } from './fleet-status.ts'

/** Which tenant a lane's counters are of. */
export interface FleetTenantLabels {
  readonly tenantId: string
  readonly jobId: string
}

export interface FleetMetrics {
  readonly registry: Registry
  /** A tenant's import loader counters now (cumulative for that loader; a new loader starts again from 0). */
  onTick(tenant: FleetTenantLabels, counters: LoaderCounters): void
  /** A tenant's files lane counters now (cumulative for that lane). */
  onFilesTick(tenant: FleetTenantLabels, counters: FilesLaneCounters): void
  /** A tenant's update lane counters now (cumulative for that lane): its ledger errors. */
  onUpdatesTick(tenant: FleetTenantLabels, counters: UpdateLaneCounters): void
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
  const lanes = registerLaneCounters(registry, tenantLabels)
  const ledgerErrors = new Counter({ name: 'chatferry_ledger_read_errors_total', help: 'Scrapes whose ledger read failed', registers: [registry] })

  // One ledger reading per scrape, shared by every gauge of that scrape; on a large job, one per
  // 20 times what a reading takes (src/paced-reading.ts): the scrape answers at once from the last.
  const read = pacedReading(options.read, { minGapMs: SCRAPE_READING_GAP_MS }).get
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

  const labels = (tenant: FleetTenantLabels) => ({ job_id: tenant.jobId, tenant: tenant.tenantId })
  return {
    registry,
    onTick: (tenant, c) => lanes.onTick(labels(tenant), c),
    onFilesTick: (tenant, c) => lanes.onFilesTick(labels(tenant), c),
    onUpdatesTick: (tenant, c) => lanes.onUpdatesTick(labels(tenant), c),
    close: stopRequests,
  }
}
