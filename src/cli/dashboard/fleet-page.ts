/**
 * The fleet dashboard's page (`chatferry fleet dashboard`): the fleet's totals (tenants per state,
 * done, remaining, rejects, items per minute), its throughput chart against the tenants' quotas
 * together, and a table of tenants — state, done/remaining per entity, rate against the app's
 * quota, ETA at that quota, rejects, files copied of all (and failed), last error — redrawn from `/api/view` without reloading.
 * Served by chatferry itself with page.ts's stylesheet and script helpers; every value is set as
 * text, never as markup. A tenant's row is `tr#tenant-<id>`, its cells carry `data-field`.
 */
import { COMMON_JS, STYLE, TICK_JS } from './page.ts'

const ENTITY_HEADERS = ['users', 'groups', 'members', 'messages'].map((e) => `<th>${e} done</th><th>${e} left</th>`).join('')

export const FLEET_PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chatferry fleet dashboard</title>
<style>
${STYLE}td.err{text-align:left;max-width:32em;white-space:normal}
</style>
</head>
<body>
<h1>chatferry · fleet <span id="fleet">…</span></h1>
<div class="muted">updated <span id="at">…</span> · <span id="via">…</span> <span id="error"></span></div>
<div class="muted" id="left-out"></div>
<div class="cards">
<div class="card">tenants<b id="total-tenants">…</b><span id="states" class="muted"></span></div>
<div class="card">done<b id="total-done">…</b></div>
<div class="card">remaining<b id="total-remaining">…</b></div>
<div class="card">rejected<b id="total-rejected">…</b></div>
<div class="card">items/min (last minute)<b id="rate">…</b></div>
</div>
<h2>Tenants</h2>
<table id="tenants"><thead><tr><th>tenant</th><th>state</th>${ENTITY_HEADERS}<th>done</th><th>remaining</th><th>vs quota</th><th>ETA at quota</th><th>rejects</th><th>files copied</th><th>last run</th><th>last error</th></tr></thead><tbody></tbody></table>
<h2>Throughput, all tenants</h2>
<svg id="chart" width="760" height="220" viewBox="0 0 760 220" role="img" aria-label="items per minute over time against the tenants' quotas together"></svg>
<script src="app.js"></script>
</body>
</html>
`

const FLEET_DRAW_JS = `const BAD = ['failed', 'interrupted', 'rejected']
/** A tenant's files lane: copied of all, and the failed ones; empty when it has no files. */
function filesCell(f) {
  if (!f) return { text: '', field: 'files' }
  const all = f.planned + f.copied + f.failed + f.skipped
  return { text: n(f.copied) + ' of ' + n(all) + (f.failed > 0 ? ', ' + n(f.failed) + ' failed' : ''), field: 'files', cls: f.failed > 0 ? 'bad' : '' }
}
function draw(v) {
  $('fleet').textContent = v.fleet
  $('at').textContent = new Date(v.at).toLocaleTimeString()
  $('via').textContent = v.via
  $('error').textContent = v.error ? 'ledger read failed: ' + v.error : ''
  $('left-out').textContent = v.deprovisioned.length ? 'deprovisioned, left out: ' + v.deprovisioned.join(', ') : ''
  const t = v.totals
  $('total-tenants').textContent = n(t.tenants)
  $('states').textContent = Object.entries(t.states).filter((e) => e[1] > 0).map((e) => e[1] + ' ' + e[0]).join(', ')
  $('total-done').textContent = n(t.done)
  $('total-remaining').textContent = n(t.remaining)
  $('total-rejected').textContent = n(t.rejected)
  $('rate').textContent = n(t.itemsLastMinute)
  fill('tenants', v.tenants.map((x) => ({ id: 'tenant-' + x.tenantId, cells: [
    x.tenantId,
    { text: x.state, field: 'state', cls: BAD.includes(x.state) ? 'bad' : x.state === 'done' ? 'ok' : '' },
    ...x.entities.flatMap((e) => [{ text: n(e.done), field: e.entity + '-done' }, { text: n(e.remaining), field: e.entity + '-remaining' }]),
    { text: n(x.done), field: 'done' },
    { text: n(x.remaining), field: 'remaining' },
    { text: Math.round(x.rateVsQuota * 100) + '% of ' + n(x.quotaItemsPerMinute) + '/min', field: 'rate' },
    { text: x.etaSeconds == null ? '–' : dur(x.etaSeconds), field: 'eta' },
    { text: n(x.rejected), field: 'rejected', cls: x.rejected > 0 ? 'bad' : '' },
    filesCell(v.files && v.files[x.jobId]),
    { text: x.lastRun ? '#' + x.lastRun.id + ' ' + x.lastRun.mode + ' ' + x.lastRun.status : '', field: 'last-run' },
    { text: x.lastError || '', field: 'last-error', cls: 'err' },
  ] })))
  chart(v.series, t.quotaItemsPerMinute)
}
`

export const FLEET_PAGE_JS = `${COMMON_JS}${FLEET_DRAW_JS}${TICK_JS}`
