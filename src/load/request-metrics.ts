/**
 * The platform requests of a process as Prometheus metrics (prom-client): how many by endpoint
 * (the client's operation: `data_import.messages`, `chat.updateMessage`, `chat.listMessages`…) and
 * outcome (`ok`, `rate_limited`, `client_error`, `server_error`, `timeout`, `network`…), and how
 * long they took, by endpoint. Fed by src/target/request-observers.ts, so every lane's requests
 * count (imports, updates, read-backs), in a `run` or `worker` and in a fleet process alike.
 */
import type { Registry } from 'prom-client'

import { observePlatformRequests } from '../target/request-observers.ts'
import { promClient } from './prom-client.ts'

/** Seconds: an import request at the sandbox takes tens of ms; the platform's, hundreds; a timeout, 30 s. */
const DURATION_BUCKETS = [0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30]

/** Registers the request metrics in `registry` and starts counting; returns the function that stops counting. */
export function registerRequestMetrics(registry: Registry): () => void {
  const { Counter, Histogram } = promClient()
  const requests = new Counter({
    name: 'chatferry_platform_requests_total',
    help: 'Platform requests this process sent, by endpoint (operation) and outcome (ok, rate_limited, client_error, server_error, timeout, network, invalid_response, refused, aborted)',
    labelNames: ['endpoint', 'outcome'],
    registers: [registry],
  })
  const duration = new Histogram({
    name: 'chatferry_platform_request_duration_seconds',
    help: 'Seconds from sending a platform request to its answer or failure, by endpoint',
    labelNames: ['endpoint'],
    buckets: DURATION_BUCKETS,
    registers: [registry],
  })
  return observePlatformRequests((r) => {
    requests.inc({ endpoint: r.operation, outcome: r.outcome })
    duration.observe({ endpoint: r.operation }, r.seconds)
  })
}
