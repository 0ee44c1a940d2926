/**
 * The Prometheus metrics of `chatferry webhooks receive` (prom-client, one registry per process,
 * labelled `job_id` and `app_id`): the deliveries the receiver answered, by outcome — `stored`,
 * `redelivered` (already stored), `ignored` (a trigger that changes nothing loaded), and refused:
 * `unauthorized` (401), `malformed` (400/413), `failed` (503, the platform retries) — and how many
 * of the stored ones were changes made on the platform. Read from the receiver's live counters
 * (src/job/webhook-receiver.ts) when Prometheus scrapes; nothing on a delivery's path.
 */
import type { Counter, Registry } from 'prom-client'

import { promClient } from '../load/prom-client.ts'
import type { ReceiverCounters } from './webhook-receiver.ts'

export const DELIVERY_OUTCOMES = ['stored', 'redelivered', 'ignored', 'unauthorized', 'malformed', 'failed'] as const

export function createWebhookMetrics(o: { jobId: string; appId: string; counters: () => ReceiverCounters | undefined }): Registry {
  const { Counter, Registry } = promClient()
  const registry = new Registry()
  registry.setDefaultLabels({ job_id: o.jobId, app_id: o.appId })
  const reported: Partial<Record<keyof ReceiverCounters, number>> = {}
  // Grows the counter by what the receiver counted since the last scrape.
  const catchUp = (c: Counter, key: keyof ReceiverCounters, labels: Record<string, string> = {}) => {
    const now = o.counters()?.[key] ?? 0
    c.inc(labels, Math.max(0, now - (reported[key] ?? 0)))
    reported[key] = Math.max(now, reported[key] ?? 0)
  }
  new Counter({
    name: 'chatferry_webhook_deliveries_total',
    help: 'Webhook deliveries the receiver answered, by outcome (stored, redelivered, ignored; refused: unauthorized, malformed, failed)',
    labelNames: ['outcome'],
    registers: [registry],
    collect() {
      for (const outcome of DELIVERY_OUTCOMES) {
        catchUp(this, outcome, { outcome })
      }
    },
  })
  new Counter({
    name: 'chatferry_webhook_platform_changes_total',
    help: 'Stored deliveries that carried a change made on the platform (not the echo of chatferry’s own writes)',
    registers: [registry],
    collect() {
      catchUp(this, 'platform')
    },
  })
  return registry
}
