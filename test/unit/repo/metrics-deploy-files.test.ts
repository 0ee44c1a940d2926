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

import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.ts'
import { createLoaderMetrics } from '../../../src/load/metrics.ts'

const ROOT = resolve(import.meta.dirname, '../../..')

it('the dashboard and alert rules query only metrics and labels the registry has', async () => {
  const metrics = createLoaderMetrics({
    jobId: 'j',
    appId: 'a',
    quota: { requestsPerMinute: 60, itemsPerRequest: 50 },
    read: async () => ({ stats: [], files: undefined, watermarks: new Map(), lastDelta: undefined }),
  })
  const names = (await metrics.registry.getMetricsAsJSON()).map((m) => m.name)
  const labelsOf = (name: string) => (metrics.registry.getSingleMetric(name) as unknown as { labelNames?: string[] }).labelNames ?? []
  const known = new Map(names.map((name) => [name, new Set<string>(['job_id', 'app_id', 'job', 'instance', ...labelsOf(name)])]))
  const fleet = createFleetMetrics({ fleetId: 'f', read: async () => ({ tenants: [], stats: new Map() }) })
  for (const m of await fleet.registry.getMetricsAsJSON()) {
    const labels = (fleet.registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? []
    known.set(m.name, new Set([...(known.get(m.name) ?? []), 'fleet', 'job', 'instance', ...labels]))
  }
  // The fleet's metrics are a single job's per tenant: the job dashboard's panels work per tenant.
  // Every lane counter is in both (one definition: src/load/lane-counter-metrics.ts). Not in a
  // fleet process: the messages waiting on files and the lag behind the source (a fleet scrape
  // reads only each tenant's items and files: hundreds of tenants, a few queries each).
  const jobOnly = new Set(['chatferry_files_waiting_messages', 'chatferry_source_lag_seconds', 'chatferry_delta_last_finished_age_seconds'])
  expect(names.filter((n) => n.startsWith('chatferry_') && !jobOnly.has(n) && fleet.registry.getSingleMetric(n) === undefined)).toEqual([])
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
      // A histogram's series are its name with _bucket, _sum or _count.
      const raw = m[1] ?? ''
      const base = raw.replace(/_(bucket|sum|count)$/, '')
      const name = known.has(raw) || !known.has(base) ? raw : base
      expect(known.has(name), `${name} in ${expr}`).toBe(true)
      for (const label of (m[2] ?? '').matchAll(/([a-z_]+)\s*[=!~]/g)) {
        expect(known.get(name)?.has(label[1] ?? '') || (label[1] === 'le' && name !== raw), `label ${label[1]} of ${name}`).toBe(true)
      }
      checked++
    }
  }
  expect(checked).toBeGreaterThan(10)
  metrics.close()
  fleet.close()
})
