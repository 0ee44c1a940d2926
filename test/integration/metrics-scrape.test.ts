/**
 * Issue 31, metrics: `run` with `CHATFERRY_METRICS_PORT` serves Prometheus metrics during its load,
 * as processes against the sandbox; each scrape parses with a Prometheus text-format parser. The
 * requests and items this process settled grow between scrapes, the ledger's items per entity and
 * state add up to the totals `status --json` gives, the quota is the configured one, and the
 * endpoint listens on loopback only.
 */
import parsePrometheusTextFormat, { type PromFamily } from 'parse-prometheus-text-format'
import { expect, it } from 'vitest'

import { genericSourceConfig, loadGenericSqlFixture } from '../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../helpers/cli-suite.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../helpers/run-e2e.ts'

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
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 30 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    requestsPerMinute: 30,
    itemsPerRequest: 2,
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
  })
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
    // The counters grow while the load goes on.
    let later = first
    const deadline = Date.now() + 60_000
    while ((value(later, 'chatferry_loader_requests_total') ?? 0) < (value(first, 'chatferry_loader_requests_total') ?? 0) + 3) {
      expect(Date.now()).toBeLessThan(deadline)
      await new Promise((r) => setTimeout(r, 1000))
      later = await scrape()
    }
    expect(value(later, 'chatferry_loader_items_total', { outcome: 'done' })).toBeGreaterThan(
      value(first, 'chatferry_loader_items_total', { outcome: 'done' }) ?? 0,
    )
    const types = Object.fromEntries(later.map((f) => [f.name, f.type]))
    expect(types).toMatchObject({ chatferry_loader_requests_total: 'COUNTER', chatferry_items: 'GAUGE', chatferry_quota_used_ratio: 'GAUGE' })
    expect(value(later, 'chatferry_quota_used_ratio')).toBeGreaterThan(0)
    expect(JSON.stringify(later)).not.toContain(app.apiKey)
    // Loopback only: the port is not served on the machine's other addresses.
    const port = new URL(url).port
    const { networkInterfaces } = await import('node:os')
    const other = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address
    if (other !== undefined) {
      await expect(fetch(`http://${other}:${port}/metrics`)).rejects.toThrow()
    }
  } finally {
    const ended = await run.done
    expect([0, 3], ended.stderr.slice(-2000)).toContain(ended.code)
  }
}, 180_000)
