/**
 * The metrics endpoint of `fleet run` and `fleet worker`: when the fleet file's `metrics.port` (or
 * CHATFERRY_METRICS_PORT) is set, `GET /metrics` serves src/fleet/fleet-metrics.ts's registry, its
 * ledger gauges read at each scrape from the same lines `fleet status` prints
 * (fleet-status-read.ts) and each tenant's items per entity. Loopback unless `metrics.host` says
 * otherwise; a failed ledger read is counted and warned of once, never fatal.
 */
import type { Logger } from 'pino'

import { createFleetMetrics, type FleetMetrics } from '../fleet/fleet-metrics.ts'
import { jobFiles } from '../load/metrics-reading.ts'
import type { EntityStats, FileCounts } from '../state/index.ts'
import type { FleetLedgerContext } from './fleet-run-context.ts'
import { readFleetStatus } from './fleet-status-read.ts'
import { metricsPort, serveMetrics } from './metrics-server.ts'

export interface FleetMetricsEndpoint {
  readonly metrics: FleetMetrics
  stop(): Promise<void>
}

/** Starts the endpoint when the fleet asks for it (`only`: the tenants this process serves); undefined when it does not. */
export async function startFleetMetricsEndpoint(
  ctx: FleetLedgerContext,
  only: readonly string[],
  logger: Logger,
): Promise<FleetMetricsEndpoint | undefined> {
  const port = metricsPort(ctx.fleet.parsed.metrics?.port)
  if (port === undefined) {
    return undefined
  }
  let warned = false
  const metrics = createFleetMetrics({
    fleetId: ctx.fleet.id,
    read: async () => {
      const { tenants } = await readFleetStatus(ctx.fleet, ctx.store, only)
      const stats = new Map<string, EntityStats[]>()
      const files = new Map<string, FileCounts | undefined>()
      for (const t of tenants) {
        stats.set(t.jobId, await ctx.store.entityStats(t.jobId))
        files.set(t.jobId, await jobFiles(ctx.store, t.jobId))
      }
      return { tenants, stats, files }
    },
    onLedgerError: (err) => {
      if (!warned) {
        warned = true
        logger.warn(`metrics: the ledger could not be read for a scrape (${err instanceof Error ? err.message : String(err)})`)
      }
    },
  })
  const stop = await serveMetrics(metrics.registry, ctx.fleet.parsed.metrics?.host ?? '127.0.0.1', port, logger).catch((err: unknown) => {
    metrics.close()
    throw err
  })
  return { metrics, stop: () => (metrics.close(), stop()) }
}
