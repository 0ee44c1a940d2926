/**
 * Issue 31: what a job's metrics registry (src/load/metrics.ts) says, parsed as Prometheus text:
 * every platform request the HTTP layer sends is counted by endpoint and outcome (a local HTTP
 * server answers 200, 429, 500 and a body that does not parse); the loader's pauses and ledger
 * errors and the files lane's copies grow their counters by what the ticks add; the ledger's
 * reading becomes the files gauges, the lag behind the source and the age of the last delta; and
 * closing the registry stops its counting. The update lane's ledger errors are counted apart
 * (`lane="update"`). A fleet's registry has the same lane counters per tenant (its files lane's
 * copies, its update lane's ledger errors), and a tenant's lane that starts again counts from 0.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'

import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { z } from 'zod'

import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.ts'
import type { LoaderCounters } from '../../../src/load/loader.ts'
import { createLoaderMetrics } from '../../../src/load/metrics.ts'
import type { JobMetricsReading } from '../../../src/load/metrics-reading.ts'
import { emptyUpdateCounters } from '../../../src/load/update-lane-run.ts'
import { requestJson } from '../../../src/target/http.ts'

let server: Server
let base = ''

beforeAll(async () => {
  server = createServer((req, res) => {
    const status = Number(req.url?.slice(1))
    res.writeHead(status, { 'content-type': 'application/json' }).end(status === 299 ? 'not json' : JSON.stringify({ data: { ok: true } }))
  })
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r))
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
})
afterAll(() => new Promise<void>((r) => server.close(() => r())))

const value = (families: PromFamily[], name: string, labels: Record<string, string> = {}): number | undefined => {
  const sample = families
    .find((f) => f.name === name)
    ?.metrics.find((m) => Object.entries(labels).every(([k, v]) => (m as { labels?: Record<string, string> }).labels?.[k] === v))
  return sample === undefined ? undefined : Number((sample as { value?: string }).value)
}

const NOW = Date.parse('2026-11-27T10:00:00Z')
const reading: JobMetricsReading = {
  stats: [],
  files: { planned: 3, copied: 5, failed: 1, skipped: 0, copiedBytes: 5 * 1024, plannedBytes: 300, failedWaiting: 1, waitingMessages: 2 },
  watermarks: new Map([['messages', NOW - 90_000]]),
  lastDelta: { finishedAt: new Date(NOW - 600_000), status: 'succeeded' },
}

const counters = (over: Partial<LoaderCounters>): LoaderCounters => ({
  requests: 0,
  rateLimited: 0,
  itemsDone: 0,
  itemsRejected: 0,
  itemsRequeued: 0,
  itemsAgedOut: 0,
  batchesSettled: 0,
  batchesSplit: 0,
  batchesReleased: 0,
  textLinksRewritten: 0,
  textLinksOverLimit: 0,
  readBacks: 0,
  chatRequests: 0,
  fenced: 0,
  pauses: 0,
  pausedMs: 0,
  ledgerErrors: 0,
  startedAt: 0,
  firstRequestAt: undefined,
  ...over,
})

it('counts requests by endpoint and outcome, pauses, ledger errors, file copies; reads files, lag and delta age from the ledger', async () => {
  const metrics = createLoaderMetrics({
    jobId: 'j',
    appId: 'a',
    quota: { requestsPerMinute: 60, itemsPerRequest: 50 },
    read: async () => reading,
    now: () => NOW,
  })
  const send = (status: number, operation = 'data_import.messages') =>
    requestJson(
      { operation, method: 'POST', url: `${base}/${status}`, headers: {}, body: {}, timeoutMs: 5000 },
      z.object({ data: z.unknown() }),
    ).catch(() => undefined)
  await send(200)
  await send(200)
  await send(429)
  await send(500)
  await send(404, 'chat.updateMessage')
  await send(299, 'chat.listMessages')
  metrics.onTick(counters({ pauses: 1, pausedMs: 2500, ledgerErrors: 1 }))
  metrics.onTick(counters({ pauses: 2, pausedMs: 4000, ledgerErrors: 3 }))
  metrics.onUpdatesTick({ ...emptyUpdateCounters(), ledgerErrors: 1 })
  metrics.onUpdatesTick({ ...emptyUpdateCounters(), ledgerErrors: 2 })
  metrics.onFilesTick({ copied: 4, alreadyStored: 1, bytes: 4096, retried: 2, failed: 1, inFlight: 1 })
  const families = parsePrometheusTextFormat(await metrics.registry.metrics())

  const requests = (endpoint: string, outcome: string) => value(families, 'chatferry_platform_requests_total', { endpoint, outcome })
  expect(requests('data_import.messages', 'ok')).toBe(2)
  expect(requests('data_import.messages', 'rate_limited')).toBe(1)
  expect(requests('data_import.messages', 'server_error')).toBe(1)
  expect(requests('chat.updateMessage', 'client_error')).toBe(1)
  expect(requests('chat.listMessages', 'invalid_response')).toBe(1)
  const duration = families.find((f) => f.name === 'chatferry_platform_request_duration_seconds')
  expect(duration?.type).toBe('HISTOGRAM')
  expect(value(families, 'chatferry_loader_pauses_total')).toBe(2)
  expect(value(families, 'chatferry_loader_paused_seconds_total')).toBe(4)
  expect(value(families, 'chatferry_loader_ledger_errors_total', { lane: 'import' })).toBe(3)
  expect(value(families, 'chatferry_loader_ledger_errors_total', { lane: 'update' })).toBe(2)
  expect(value(families, 'chatferry_files_copied_total', { how: 'uploaded' })).toBe(3)
  expect(value(families, 'chatferry_files_copied_total', { how: 'already_stored' })).toBe(1)
  expect(value(families, 'chatferry_files_copied_bytes_total')).toBe(4096)
  expect(value(families, 'chatferry_files_attempts_failed_total', { then: 'retried' })).toBe(2)
  expect(value(families, 'chatferry_files', { state: 'planned' })).toBe(3)
  expect(value(families, 'chatferry_files', { state: 'copied' })).toBe(5)
  expect(value(families, 'chatferry_files', { state: 'failed' })).toBe(1)
  expect(value(families, 'chatferry_files_bytes', { state: 'copied' })).toBe(5120)
  expect(value(families, 'chatferry_files_waiting_messages')).toBe(2)
  expect(value(families, 'chatferry_source_lag_seconds', { entity: 'messages' })).toBe(90)
  expect(value(families, 'chatferry_delta_last_finished_age_seconds', { status: 'succeeded' })).toBe(600)

  // Closed, the registry counts no more requests.
  metrics.close()
  await send(200)
  const after = parsePrometheusTextFormat(await metrics.registry.metrics())
  expect(value(after, 'chatferry_platform_requests_total', { endpoint: 'data_import.messages', outcome: 'ok' })).toBe(2)
})

it('a job without files or deltas has no files series and no delta age', async () => {
  const metrics = createLoaderMetrics({
    jobId: 'j',
    appId: 'a',
    quota: { requestsPerMinute: 60, itemsPerRequest: 50 },
    read: async () => ({ ...reading, files: undefined, lastDelta: undefined }),
  })
  const families = parsePrometheusTextFormat(await metrics.registry.metrics())
  metrics.close()
  expect(families.find((f) => f.name === 'chatferry_files')?.metrics ?? []).toEqual([])
  expect(families.find((f) => f.name === 'chatferry_files_bytes')?.metrics ?? []).toEqual([])
  expect(families.find((f) => f.name === 'chatferry_delta_last_finished_age_seconds')?.metrics ?? []).toEqual([])
})

it("a fleet's registry counts each tenant's files lane and update lane ledger errors; a lane that starts again counts from 0", async () => {
  const fleet = createFleetMetrics({ fleetId: 'f', read: async () => ({ tenants: [], stats: new Map() }) })
  const acme = { tenantId: 'acme', jobId: 'f_acme' }
  const globex = { tenantId: 'globex', jobId: 'f_globex' }
  const files = (copied: number, bytes: number, failed = 0) => ({ copied, alreadyStored: 0, bytes, retried: 0, failed, inFlight: 1 })
  fleet.onFilesTick(acme, files(2, 200))
  fleet.onFilesTick(acme, files(3, 300, 1))
  // acme's next files lane (its next run): from 0 again, all of it new.
  fleet.onFilesTick(acme, files(1, 50))
  fleet.onFilesTick(globex, files(4, 4000))
  fleet.onUpdatesTick(acme, { ...emptyUpdateCounters(), ledgerErrors: 2 })
  // acme's import loader, then its next one (another start): 5 + 1 requests.
  fleet.onTick(acme, counters({ startedAt: 1, requests: 5, ledgerErrors: 1 }))
  fleet.onTick(acme, counters({ startedAt: 2, requests: 1 }))
  const families = parsePrometheusTextFormat(await fleet.registry.metrics())
  fleet.close()
  const of = (t: { tenantId: string; jobId: string }) => ({ fleet: 'f', tenant: t.tenantId, job_id: t.jobId })
  expect(value(families, 'chatferry_files_copied_total', { ...of(acme), how: 'uploaded' })).toBe(4)
  expect(value(families, 'chatferry_files_copied_bytes_total', of(acme))).toBe(350)
  expect(value(families, 'chatferry_files_attempts_failed_total', { ...of(acme), then: 'failed' })).toBe(1)
  expect(value(families, 'chatferry_files_copied_total', { ...of(globex), how: 'uploaded' })).toBe(4)
  expect(value(families, 'chatferry_files_copied_bytes_total', of(globex))).toBe(4000)
  expect(value(families, 'chatferry_loader_ledger_errors_total', { ...of(acme), lane: 'update' })).toBe(2)
  expect(value(families, 'chatferry_loader_ledger_errors_total', { ...of(acme), lane: 'import' })).toBe(1)
  expect(value(families, 'chatferry_loader_requests_total', of(acme))).toBe(6)
  expect(value(families, 'chatferry_loader_ledger_errors_total', { ...of(globex), lane: 'update' })).toBeUndefined()
})
