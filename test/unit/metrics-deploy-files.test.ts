/**
 * Issue 31: the sample Grafana dashboard and the Prometheus alert rules in deploy/monitoring/
 * parse, and every chatferry_* metric they query is one the loader's registry (src/load/metrics.ts)
 * or a fleet process's (src/fleet/fleet-metrics.ts) exposes, with the labels they use: a renamed
 * metric cannot leave them silently empty.
 */
import { readFileSync } from 'node:fs'
import { resolve } from 'node:path'

import { expect, it } from 'vitest'
import { parse } from 'yaml'

import { createFleetMetrics } from '../../src/fleet/fleet-metrics.ts'
import { createLoaderMetrics } from '../../src/load/metrics.ts'

const ROOT = resolve(import.meta.dirname, '../..')

it('the dashboard and alert rules query only metrics and labels the registry has', async () => {
  const metrics = createLoaderMetrics({ jobId: 'j', appId: 'a', quota: { requestsPerMinute: 60, itemsPerRequest: 50 }, stats: async () => [] })
  const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name)
  const labelsOf = (name: string) => (metrics.registry.getSingleMetric(name) as unknown as { labelNames?: string[] }).labelNames ?? []
  const known = new Map(names.map((name) => [name, new Set<string>(['job_id', 'app_id', 'job', 'instance', ...labelsOf(name)])]))
  const fleet = createFleetMetrics({ fleetId: 'f', read: async () => ({ tenants: [], stats: new Map() }) })
  for (const m of await fleet.registry.getMetricsAsJSON()) {
    const labels = (fleet.registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? []
    known.set(m.name, new Set([...(known.get(m.name) ?? []), 'fleet', 'job', 'instance', ...labels]))
  }
  // The fleet's metrics are a single job's per tenant: the job dashboard's panels work per tenant.
  expect(
    names
      .filter((n) => n.startsWith('chatferry_') && n !== 'chatferry_loader_read_backs_total' && n !== 'chatferry_loader_chat_requests_total')
      .every((n) => fleet.registry.getSingleMetric(n) !== undefined),
  ).toBe(true)
  const rules = parse(readFileSync(resolve(ROOT, 'deploy/monitoring/chatferry-alerts.yaml'), 'utf8')) as {
    groups: { rules: { alert: string; expr: string }[] }[]
  }
  const dashboard = JSON.parse(readFileSync(resolve(ROOT, 'deploy/monitoring/chatferry-grafana-dashboard.json'), 'utf8')) as {
    panels: { targets: { expr: string }[] }[]
  }
  const exprs = [...rules.groups.flatMap((g) => g.rules.map((r) => r.expr)), ...dashboard.panels.flatMap((p) => p.targets.map((t) => t.expr))]
  expect(exprs.length).toBeGreaterThan(10)
  let checked = 0
  for (const expr of exprs) {
    for (const m of expr.matchAll(/(chatferry_[a-z_]+|process_cpu_seconds_total)(?:\{([^}]*)\})?/g)) {
      const name = m[1] ?? ''
      expect(known.has(name), `${name} in ${expr}`).toBe(true)
      for (const label of (m[2] ?? '').matchAll(/([a-z_]+)\s*[=!~]/g)) {
        expect(known.get(name)?.has(label[1] ?? ''), `label ${label[1]} of ${name}`).toBe(true)
      }
      checked++
    }
  }
  expect(checked).toBeGreaterThan(10)
})
