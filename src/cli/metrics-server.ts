/**
 * Serves a process's Prometheus metrics (src/load/metrics.ts; a fleet process's: fleet-metrics-endpoint.ts) on `GET /metrics`, node:http,
 * when the configuration's `metrics.port` (or CHATFERRY_METRICS_PORT) is set: on 127.0.0.1 unless
 * `metrics.host` says otherwise. Read-only; the registry holds counts, never a secret.
 */
import { createServer } from 'node:http'
import type { AddressInfo } from 'node:net'

import type { Logger } from 'pino'
import type { Registry } from 'prom-client'

import type { LedgerContext } from '../job/ledger-context.ts'
import { createLoaderMetrics, type LoaderMetrics } from '../load/metrics.ts'
import { readJobMetrics } from '../load/metrics-reading.ts'

export const METRICS_PORT_ENV = 'CHATFERRY_METRICS_PORT'

export interface MetricsEndpoint {
  readonly metrics: LoaderMetrics
  stop(): Promise<void>
}

/** Starts the endpoint when the job asks for it; undefined when it does not. */
export async function startMetricsEndpoint(ctx: LedgerContext, logger: Logger): Promise<MetricsEndpoint | undefined> {
  const port = metricsPort(ctx.config.metrics?.port)
  if (port === undefined) {
    return undefined
  }
  const host = ctx.config.metrics?.host ?? '127.0.0.1'
  let warned = false
  const metrics = createLoaderMetrics({
    jobId: ctx.jobId,
    appId: ctx.config.target.appId,
    quota: ctx.config.target.quota,
    read: () => readJobMetrics(ctx.store, ctx.jobId),
    onLedgerError: (err) => {
      if (!warned) {
        warned = true
        logger.warn(`metrics: the ledger could not be read for a scrape (${err instanceof Error ? err.message : String(err)})`)
      }
    },
  })
  const stop = await serveMetrics(metrics.registry, host, port, logger).catch((err: unknown) => {
    metrics.close()
    throw err
  })
  return { metrics, stop: () => (metrics.close(), stop()) }
}

/** Serves `registry` on `GET /metrics` at host:port (logging where); resolves to its stop. */
export async function serveMetrics(registry: Registry, host: string, port: number, logger: Logger): Promise<() => Promise<void>> {
  const server = createServer((req, res) => void answer(registry, req.url ?? '/', req.method ?? 'GET', res))
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, host, () => (server.off('error', reject), resolve()))
  })
  const bound = (server.address() as AddressInfo).port
  logger.info({ metricsPort: bound }, `metrics at http://${host.includes(':') ? `[${host}]` : host}:${bound}/metrics`)
  return () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
}

/** The port asked for: CHATFERRY_METRICS_PORT over the configuration's `metrics.port`; undefined: no endpoint. */
export function metricsPort(configured: number | undefined, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const fromEnv = env[METRICS_PORT_ENV]
  return fromEnv !== undefined && fromEnv !== '' ? Number(fromEnv) : configured
}

async function answer(registry: Registry, url: string, method: string, res: import('node:http').ServerResponse): Promise<void> {
  if (method !== 'GET' || new URL(url, 'http://metrics').pathname !== '/metrics') {
    res.writeHead(404).end('not found: GET /metrics\n')
    return
  }
  const text = await registry.metrics()
  res.writeHead(200, { 'content-type': registry.contentType, 'cache-control': 'no-store' }).end(text)
}
