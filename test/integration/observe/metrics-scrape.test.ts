/**
 * Issue 31, metrics: `run` with `CHATFERRY_METRICS_PORT` serves Prometheus metrics during its load,
 * as processes against the sandbox; each scrape parses with a Prometheus text-format parser. The
 * requests and items this process settled grow between scrapes, the ledger's items per entity and
 * state add up to the totals `status --json` gives, the quota is the configured one, and the
 * endpoint listens on loopback only. The sandbox answers some import requests 429 (its `extra429`
 * fault) and one message has two files re-hosted into a local store (one there, one missing):
 * the requests by endpoint and outcome count the 429s, the loader's pauses follow them, the files
 * lane's gauges and counters say one copied (its bytes) and one failed, and each entity's lag
 * behind the source is there.
 */
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format'
import { expect, it } from 'vitest'

import { loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { CHART_BYTES, rehostIntoLocalStore, sourceWithLocalFiles } from '../../helpers/local-rehost.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

const value = (families: PromFamily[], name: string, labels: Record<string, string> = {}): number | undefined => {
  const family = families.find((f) => f.name === name)
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v))
  return sample?.value === undefined ? undefined : Number(sample.value)
}

it('run serves Prometheus metrics during its load: counters grow, ledger gauges match status --json', async () => {
  const source = await suite.freshDb('cf_metrics_src')
  const state = await suite.freshDb('cf_metrics_state')
  await loadGenericSqlFixture('postgres', source.url)
  // Message 7 has two files under the uploads directory: one there (copied), one missing (failed).
  const withFiles = await sourceWithLocalFiles(source.url)
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 30, faults: { extra429: 0.2, seed: 31 } })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    requestsPerMinute: 30,
    itemsPerRequest: 2,
    source: withFiles,
    policies: { retention: { oldMessages: 'send' } },
  })
  rehostIntoLocalStore(cfg)
  const run = runCli(['run', '--config', cfg], { CHATFERRY_METRICS_PORT: '0' })
  let printed = ''
  run.child.stderr?.on('data', (d: Buffer) => (printed += d.toString()))
  run.child.stdout?.on('data', (d: Buffer) => (printed += d.toString()))
  try {
    await run.waitFor(/metrics at http:\/\/127\.0\.0\.1:\d+\/metrics/, 60_000)
    const url = /metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)/.exec(printed)?.[1] ?? ''
    const scrape = async () => {
      const res = await fetch(url)
      expect(res.status).toBe(200)
      expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/)
      return parsePrometheusTextFormat(await res.text())
    }
    const first = await scrape()
    expect(value(first, 'chatferry_quota_items_per_minute', { job_id: app.id, app_id: app.id })).toBe(60)
    // Loopback only: the port is not served on the machine's other addresses.
    const port = new URL(url).port
    const { networkInterfaces } = await import('node:os')
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address
    if (other !== undefined) {
      await expect(fetch(`http://${other}:${port}/metrics`)).rejects.toThrow()
    }
    // Scraped every second until the run ends (its endpoint with it): the last scrape is the load's end.
    const scrapes = [first]
    const polling = (async () => {
      for (;;) {
        await new Promise((r) => setTimeout(r, 1000))
        const next = await scrape().catch(() => undefined)
        if (next === undefined) {
          return
        }
        scrapes.push(next)
      }
    })()
    // The ledger's items per entity and state add up to status --json's totals (planned while loading: stable).
    const status = JSON.parse((await runCli(['status', '--config', cfg, '--json']).done).stdout) as {
      entities: { entity: string; total: number }[]
    }
    for (const e of status.entities) {
      const states = ['planned', 'sent', 'done', 'skipped', 'rejected'].map(
        (s) => value(first, 'chatferry_items', { entity: e.entity, state: s }) ?? NaN,
      )
      expect(
        states.reduce((a, b) => a + b, 0),
        e.entity,
      ).toBe(e.total)
    }
    const ended = await run.done
    await polling
    expect([0, 3], ended.stderr.slice(-2000)).toContain(ended.code)
    const later = scrapes.at(-1) ?? first
    expect(scrapes.length, 'scrapes during the load').toBeGreaterThan(5)
    // The counters grew while the load went on.
    expect(value(later, 'chatferry_loader_requests_total')).toBeGreaterThanOrEqual((value(first, 'chatferry_loader_requests_total') ?? 0) + 3)
    expect(value(later, 'chatferry_loader_items_total', { outcome: 'done' })).toBeGreaterThan(
      value(first, 'chatferry_loader_items_total', { outcome: 'done' }) ?? 0,
    )
    // The sandbox's 429s: counted by endpoint and outcome, each one a pause; the files lane copied one
    // file (its bytes) and failed the missing one; every entity read has its lag behind the source.
    const sumOf = (fs: PromFamily[], name: string, labels: Record<string, RegExp>) =>
      (fs.find((f) => f.name === name)?.metrics ?? [])
        .filter((m) => Object.entries(labels).every(([k, re]) => re.test(m.labels?.[k] ?? '')))
        .reduce((a, m) => a + Number(m.value), 0)
    const imports = (outcome: string) =>
      sumOf(later, 'chatferry_platform_requests_total', { endpoint: /^data_import\./, outcome: new RegExp(`^${outcome}$`) })
    expect(imports('rate_limited')).toBeGreaterThanOrEqual(1)
    expect(imports('ok')).toBeGreaterThan(0)
    expect(value(later, 'chatferry_loader_pauses_total')).toBe(imports('rate_limited'))
    expect(value(later, 'chatferry_loader_paused_seconds_total')).toBeGreaterThan(0)
    expect(value(later, 'chatferry_files', { state: 'copied' })).toBe(1)
    expect(value(later, 'chatferry_files', { state: 'failed' })).toBe(1)
    expect(value(later, 'chatferry_files_bytes', { state: 'copied' })).toBe(CHART_BYTES)
    expect(value(later, 'chatferry_files_copied_total', { how: 'uploaded' })).toBe(1)
    expect(value(later, 'chatferry_files_copied_bytes_total')).toBe(CHART_BYTES)
    expect(value(later, 'chatferry_files_attempts_failed_total', { then: 'failed' })).toBe(1)
    for (const entity of ['users', 'groups', 'messages']) {
      expect(value(later, 'chatferry_source_lag_seconds', { entity }), entity).toBeGreaterThanOrEqual(0)
    }
    expect(value(later, 'chatferry_loader_ledger_errors_total', { lane: 'import' })).toBe(0)
    const types = Object.fromEntries(later.map((f) => [f.name, f.type]))
    expect(types).toMatchObject({
      chatferry_loader_requests_total: 'COUNTER',
      chatferry_items: 'GAUGE',
      chatferry_quota_used_ratio: 'GAUGE',
      chatferry_platform_requests_total: 'COUNTER',
      chatferry_platform_request_duration_seconds: 'HISTOGRAM',
      chatferry_files: 'GAUGE',
    })
    expect(JSON.stringify(later)).not.toContain(app.apiKey)
    expect(scrapes.some((s) => (value(s, 'chatferry_quota_used_ratio') ?? 0) > 0)).toBe(true)
  } finally {
    run.child.kill('SIGTERM')
  }
}, 180_000)
