/**
 * Issue 31, metrics of `webhooks receive`: the receiver (src/job/webhook-receiver.ts) on a real
 * Postgres ledger over real HTTP, its registry (src/job/webhook-metrics.ts) served as the command
 * serves it (src/cli/metrics-server.ts) and parsed with a Prometheus text-format parser: refused
 * deliveries are counted by outcome (401 without credentials, 400 for a body that is no envelope),
 * nothing is counted stored, and the counters grow with the next refusal. No credential in a scrape.
 */
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format'
import { pino } from 'pino'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { serveMetrics } from '../../../src/cli/metrics-server.ts'
import { createWebhookMetrics } from '../../../src/job/webhook-metrics.ts'
import { type Receiver, startReceiver } from '../../../src/job/webhook-receiver.ts'
import { hashPassword } from '../../../src/job/webhook-registration.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'

const PASSWORD = 'webhook-password-0123456789'
const logger = pino({ level: 'silent' })

let db: TestDatabase
let store: LedgerStore
let receiver: Receiver
let stop: () => Promise<void>
let metricsUrl = ''

beforeAll(async () => {
  db = await createTestDatabase('cf_webhook_metrics')
  store = await openLedger({ url: db.url, poolSize: 2 })
  await store.ensureJob('wh-job', 'wh-app')
  receiver = await startReceiver({
    ledger: store.platformEvents,
    jobId: 'wh-job',
    appId: 'wh-app',
    auth: { username: 'chatferry', passwordHash: hashPassword(PASSWORD) },
    host: '127.0.0.1',
    port: 0,
    logger,
  })
  const registry = createWebhookMetrics({ jobId: 'wh-job', appId: 'wh-app', counters: () => receiver.counters })
  const lines: string[] = []
  stop = await serveMetrics(registry, '127.0.0.1', 0, pino({ level: 'info' }, { write: (l: string) => void lines.push(l) }))
  metricsUrl = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(lines.join(''))?.[1] ?? ''
})

afterAll(async () => {
  await stop?.()
  await receiver?.close()
  await store?.close()
  await db?.drop()
})

const value = (families: PromFamily[], name: string, labels: Record<string, string> = {}) =>
  Number(families.find((f) => f.name === name)?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))?.value ?? NaN)

async function scrape(): Promise<{ families: PromFamily[]; text: string }> {
  const res = await fetch(metricsUrl)
  expect(res.status).toBe(200)
  const text = await res.text()
  return { families: parsePrometheusTextFormat(text), text }
}

it('counts the deliveries the receiver refused, by outcome, and grows with the next one', async () => {
  const url = `http://127.0.0.1:${receiver.address.port}/hooks`
  const auth = `Basic ${Buffer.from(`chatferry:${PASSWORD}`).toString('base64')}`
  expect((await fetch(url, { method: 'POST', body: '{}' })).status).toBe(401)
  expect((await fetch(url, { method: 'POST', headers: { authorization: auth, 'content-type': 'application/json' }, body: 'not json' })).status).toBe(
    400,
  )

  const first = await scrape()
  const labels = { job_id: 'wh-job', app_id: 'wh-app' }
  expect(first.families.find((f) => f.name === 'chatferry_webhook_deliveries_total')?.type).toBe('COUNTER')
  expect(value(first.families, 'chatferry_webhook_deliveries_total', { ...labels, outcome: 'unauthorized' })).toBe(1)
  expect(value(first.families, 'chatferry_webhook_deliveries_total', { ...labels, outcome: 'malformed' })).toBe(1)
  expect(value(first.families, 'chatferry_webhook_deliveries_total', { ...labels, outcome: 'stored' })).toBe(0)
  expect(value(first.families, 'chatferry_webhook_platform_changes_total', labels)).toBe(0)
  // What the receiver's own counters say, exactly.
  expect(receiver.counters).toMatchObject({ unauthorized: 1, malformed: 1, stored: 0 })

  expect((await fetch(url, { method: 'POST', headers: { authorization: 'Basic d3Jvbmc6d3Jvbmc=' }, body: '{}' })).status).toBe(401)
  const later = await scrape()
  expect(value(later.families, 'chatferry_webhook_deliveries_total', { ...labels, outcome: 'unauthorized' })).toBe(2)
  expect(value(later.families, 'chatferry_webhook_deliveries_total', { ...labels, outcome: 'malformed' })).toBe(1)
  expect(first.text + later.text).not.toContain(PASSWORD)
})
