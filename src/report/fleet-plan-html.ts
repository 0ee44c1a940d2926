/**
 * The fleet plan report as one self-contained HTML file (the plan report's page, cards, tables
 * and bars from html.ts): the fleet's totals, a row per tenant (filterable), the time at quota per
 * tenant as bars, the rejects by reason, the tenants whose plan failed.
 */
import { formatDuration } from '../format-duration.ts'
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { FleetPlanReport } from './fleet-plan-report.ts'
import { card, esc, htmlDocument, stackedBars, tableHtml } from './html.ts'

const n = (v: number) => v.toLocaleString('en-US')

export function renderFleetPlanHtml(r: FleetPlanReport): string {
  const t = r.totals
  const create = LEGACY_ENTITIES.reduce((a, e) => a + t.toCreate[e], 0)
  const cards = [
    card('tenants', n(t.tenants)),
    ...(t.failed > 0 ? [card('plans failed', n(t.failed), 'bad')] : []),
    card('items to create', n(create)),
    card('skipped by policy', n(t.skipped)),
    card('rejected', n(t.rejected), t.rejected > 0 ? 'bad' : 'good'),
    card('import requests', n(t.requests)),
    card('fleet at quota (parallel)', formatDuration(t.seconds)),
    card('one app after another', formatDuration(t.sumSeconds)),
  ].join('')
  const rows = r.tenants.map((x) => [
    x.tenantId,
    x.appId,
    x.region,
    x.status,
    ...LEGACY_ENTITIES.map((e) => x.toCreate[e]),
    x.skipped,
    x.rejected,
    x.requests,
    `${x.quota.requestsPerMinute}/min`,
    x.status === 'failed' ? '-' : formatDuration(x.seconds),
    x.error ?? '',
  ])
  rows.push([
    'fleet totals',
    `${t.tenants} apps`,
    '',
    t.failed > 0 ? `${t.failed} failed` : 'planned',
    ...LEGACY_ENTITIES.map((e) => t.toCreate[e]),
    t.skipped,
    t.rejected,
    t.requests,
    '',
    formatDuration(t.seconds),
    '',
  ])
  const bars = stackedBars(
    r.tenants.map((x) => ({
      label: x.tenantId,
      segments: [{ value: Math.round(x.seconds), color: x.status === 'failed' ? '#d0453a' : '#2b7bb9', title: 'seconds at quota' }],
      total: x.status === 'failed' ? 'plan failed' : formatDuration(x.seconds),
    })),
    700,
    180,
  )
  const reasons = Object.entries(t.rejectsByReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, c]) => [
      reason,
      c,
      r.tenants
        .filter((x) => (x.rejectsByReason[reason] ?? 0) > 0)
        .map((x) => x.tenantId)
        .join(', '),
    ])
  const body = `<div class="cards">${cards}</div>
<h2>Tenants</h2>
<p class="meta">One row per tenant: what its own plan (its job's dry run) would create per entity, skip and reject, and the import requests and time at its app's quota. The tenants load in parallel, each at its own quota: the fleet takes as long as its slowest tenant.</p>
${tableHtml('tenants', ['tenant', 'app', 'region', 'plan', ...LEGACY_ENTITIES, 'skipped', 'rejected', 'requests', 'quota', 'at quota', 'error'], rows, true)}
<h2>Time at quota per tenant</h2>
${bars}
<h2>Rejects by reason</h2>
${tableHtml('rejects', ['reason', 'items', 'tenants'], reasons, true)}`
  const meta = `fleet <code>${esc(r.fleet)}</code> · ${n(t.tenants)} tenants · generated ${esc(r.generatedAt)} in ${esc(formatDuration(r.durationMs / 1000))}`
  return htmlDocument(`Fleet plan: ${r.fleet}`, meta, body, r)
}
