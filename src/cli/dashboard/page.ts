/**
 * The dashboard's page: plain HTML, a stylesheet and one script, all served by the dashboard
 * itself (no CDN, no framework; it works on a machine with no network). The script asks
 * `/api/view` every few seconds and redraws: the job's totals and ETAs, a table per lane
 * (imports per entity, updates per kind, files: to copy, copied, failed, bytes, messages waiting
 * on them — shown when the job has files), the throughput chart (inline SVG, items per minute
 * against the quota line), rejects by reason with samples, and the runs with their heartbeats.
 * Every value from the ledger is set as text (never as markup): a legacy id cannot inject HTML.
 * The stylesheet and the script's helpers (formats, tables, the chart, the refresh loop) are
 * exported for the fleet's page (fleet-page.ts).
 */

/** Both pages' stylesheet. */
export const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#1d2330;background:#fafbfc}
h1{font-size:1.4em;margin:0 0 .2em}h2{font-size:1.1em;margin:1.4em 0 .4em}
table{border-collapse:collapse;background:#fff}th,td{padding:.25em .7em;border-bottom:1px solid #e3e6ea;text-align:right}
th:first-child,td:first-child{text-align:left}.muted{color:#68707d}.bad{color:#b3261e}.ok{color:#1b7f3b}
.cards{display:flex;gap:1em;flex-wrap:wrap}.card{background:#fff;border:1px solid #e3e6ea;border-radius:6px;padding:.6em 1em;min-width:9em}
.card b{display:block;font-size:1.5em}svg{background:#fff;border:1px solid #e3e6ea;border-radius:6px}
code{font-size:.9em}#error{color:#b3261e}
`

export const PAGE_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>chatferry dashboard</title>
<style>
${STYLE}</style>
</head>
<body>
<h1>chatferry · <span id="job">…</span></h1>
<div class="muted">app <span id="app">…</span> · quota <span id="quota">…</span> · updated <span id="at">…</span> · <span id="via">…</span> <span id="error"></span></div>
<div class="cards">
<div class="card">done<b id="total-done">…</b></div>
<div class="card">remaining<b id="total-remaining">…</b></div>
<div class="card">rejected<b id="total-rejected">…</b></div>
<div class="card">items/min (last minute)<b id="rate">…</b></div>
<div class="card">ETA at this rate<b id="eta-observed">…</b></div>
<div class="card">ETA at the quota<b id="eta-quota">…</b></div>
</div>
<h2>Imports, per entity</h2>
<table id="entities"><thead><tr><th>entity</th><th>planned</th><th>in flight</th><th>done</th><th>skipped</th><th>rejected</th><th>remaining</th><th>items/min</th><th>vs quota</th><th>429s</th><th>ETA at quota</th></tr></thead><tbody></tbody></table>
<h2>Updates, per kind</h2>
<table id="updates"><thead><tr><th>kind</th><th>planned</th><th>in flight</th><th>done</th><th>rejected</th><th>reported</th></tr></thead><tbody></tbody></table>
<section id="files-lane" hidden>
<h2>Files</h2>
<table id="files"><thead><tr><th>lane</th><th>to copy</th><th>copied</th><th>failed</th><th>skipped</th><th>copied (MiB)</th><th>to copy (MiB, known)</th><th>messages waiting</th></tr></thead><tbody></tbody></table>
</section>
<h2>Throughput</h2>
<svg id="chart" width="760" height="220" viewBox="0 0 760 220" role="img" aria-label="items per minute over time against the quota"></svg>
<h2>Rejects by reason</h2>
<div id="rejects-note" class="muted"></div>
<table id="rejects"><thead><tr><th>code</th><th>count</th><th>samples (entity, legacy id, reason)</th></tr></thead><tbody></tbody></table>
<h2>Runs</h2>
<table id="runs"><thead><tr><th>run</th><th>mode</th><th>status</th><th>owner (worker)</th><th>started</th><th>heartbeat</th><th>finished</th><th>error</th></tr></thead><tbody></tbody></table>
<script src="app.js"></script>
</body>
</html>
`

/** What both pages' scripts share: the number and duration formats, table filling, the throughput chart. */
export const COMMON_JS = `'use strict'
const REFRESH_MS = Number(document.documentElement.dataset.refresh || 2000)
const $ = (id) => document.getElementById(id)
const n = (v) => (v == null ? '–' : Number(v).toLocaleString('en-US'))
function dur(s) {
  if (s == null) return '–'
  if (s === 0) return 'done'
  const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60)
  return d > 0 ? d + 'd ' + h + 'h' : h > 0 ? h + 'h ' + m + 'm' : m > 0 ? m + 'm ' + (s % 60) + 's' : s + 's'
}
function row(tbody, cells, id) {
  const tr = document.createElement('tr')
  if (id) tr.id = id
  for (const c of cells) {
    const td = document.createElement('td')
    if (c && typeof c === 'object') { td.textContent = c.text; if (c.id) td.id = c.id; if (c.field) td.dataset.field = c.field; if (c.cls) td.className = c.cls }
    else td.textContent = String(c)
    tr.appendChild(td)
  }
  tbody.appendChild(tr)
}
function fill(table, rows) {
  const tbody = $(table).tBodies[0]
  tbody.replaceChildren()
  for (const r of rows) row(tbody, r.cells, r.id)
}
const NS = 'http://www.w3.org/2000/svg'
function el(name, attrs, text) {
  const e = document.createElementNS(NS, name)
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v))
  if (text != null) e.textContent = text
  return e
}
function chart(series, quota) {
  const svg = $('chart'), W = 760, H = 220, L = 60, R = 10, T = 10, B = 30
  svg.replaceChildren()
  const max = Math.max(quota, ...series.map((p) => p.itemsPerMinute), 1) * 1.1
  const t0 = series.length ? series[0].t : 0, t1 = series.length ? series[series.length - 1].t : 1
  const x = (t) => L + ((t - t0) / Math.max(t1 - t0, 1)) * (W - L - R)
  const y = (v) => T + (1 - v / max) * (H - T - B)
  svg.appendChild(el('line', { x1: L, y1: H - B, x2: W - R, y2: H - B, stroke: '#999' }))
  svg.appendChild(el('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#999' }))
  svg.appendChild(el('text', { x: 4, y: y(max / 1.1) + 4, 'font-size': 11 }, n(Math.round(max / 1.1))))
  svg.appendChild(el('text', { x: 4, y: H - B, 'font-size': 11 }, '0'))
  svg.appendChild(el('line', { id: 'quota-line', x1: L, y1: y(quota), x2: W - R, y2: y(quota), stroke: '#b3261e', 'stroke-dasharray': '6 4' }))
  svg.appendChild(el('text', { x: W - R - 150, y: y(quota) - 4, 'font-size': 11, fill: '#b3261e' }, 'quota ' + n(quota) + '/min'))
  if (series.length) {
    const pts = series.map((p) => x(p.t).toFixed(1) + ',' + y(p.itemsPerMinute).toFixed(1)).join(' ')
    svg.appendChild(el('polyline', { id: 'rate-line', points: pts, fill: 'none', stroke: '#2458b3', 'stroke-width': 2, 'data-points': series.length }))
    svg.appendChild(el('text', { x: L, y: H - 8, 'font-size': 11 }, new Date(t0).toLocaleTimeString()))
    svg.appendChild(el('text', { x: W - R - 70, y: H - 8, 'font-size': 11 }, new Date(t1).toLocaleTimeString()))
  }
}
`

/** Asks for the view every REFRESH_MS and hands it to the page's `draw`. */
export const TICK_JS = `async function tick() {
  try {
    const res = await fetch('api/view', { cache: 'no-store' })
    if (res.ok) draw(await res.json())
    else $('error').textContent = 'dashboard answered ' + res.status
  } catch (err) {
    $('error').textContent = 'dashboard unreachable: ' + err.message
  }
  setTimeout(tick, REFRESH_MS)
}
tick()
`

export const PAGE_JS = `${COMMON_JS}const mib = (b) => (b / 1048576).toFixed(1)
function drawFiles(f) {
  $('files-lane').hidden = !f
  fill('files', f ? [{ id: 'files-row', cells: [
    'files',
    { text: n(f.planned), id: 'files-planned' },
    { text: n(f.copied), id: 'files-copied' },
    { text: n(f.failed), id: 'files-failed', cls: f.failed > 0 ? 'bad' : '' },
    { text: n(f.skipped), id: 'files-skipped' },
    { text: mib(f.copiedBytes), id: 'files-copied-mib' },
    { text: mib(f.plannedBytes), id: 'files-planned-mib' },
    { text: n(f.waitingMessages), id: 'files-waiting' },
  ] }] : [])
}
function draw(v) {
  const s = v.status
  $('job').textContent = s.jobId
  $('app').textContent = s.appId
  $('quota').textContent = n(s.quota.requestsPerMinute) + ' requests/min × ' + n(s.quota.itemsPerRequest) + ' items'
  $('at').textContent = new Date(v.at).toLocaleTimeString()
  $('via').textContent = v.via
  $('error').textContent = v.error ? 'ledger read failed: ' + v.error : ''
  const sum = (k) => s.entities.reduce((a, e) => a + e[k], 0)
  $('total-done').textContent = n(sum('done'))
  $('total-remaining').textContent = n(sum('remaining'))
  $('total-rejected').textContent = n(sum('rejected'))
  $('rate').textContent = n(sum('itemsLastMinute'))
  $('eta-observed').textContent = dur(v.etaSecondsObserved)
  $('eta-quota').textContent = dur(v.etaSecondsAtQuota)
  fill('entities', s.entities.map((e) => ({ id: 'entity-' + e.entity, cells: [
    e.entity,
    { text: n(e.total), id: e.entity + '-planned' },
    { text: n(e.sent), id: e.entity + '-sent' },
    { text: n(e.done), id: e.entity + '-done' },
    { text: n(e.skipped), id: e.entity + '-skipped' },
    { text: n(e.rejected), id: e.entity + '-rejected', cls: e.rejected > 0 ? 'bad' : '' },
    { text: n(e.remaining), id: e.entity + '-remaining' },
    n(e.itemsLastMinute), Math.round(e.rateVsQuota * 100) + '%', n(e.rateLimited), dur(e.etaSecondsAtQuota),
  ] })))
  fill('updates', s.updateLane.map((u) => ({ id: 'update-' + u.kind, cells: [u.kind, n(u.planned), n(u.inFlight), n(u.done), n(u.rejected), n(u.reported)] })))
  drawFiles(s.files)
  chart(v.series, v.quotaItemsPerMinute)
  $('rejects-note').textContent = v.rejects.capped ? 'grouped from the first ' + n(v.rejects.listed) + ' rejected items' : ''
  fill('rejects', v.rejects.reasons.map((r) => ({ id: 'reject-' + r.code, cells: [
    r.code, n(r.count), r.samples.map((x) => x.entity + ' ' + x.legacyId + ': ' + x.message).join(' · '),
  ] })))
  fill('runs', s.runs.map((r) => ({ id: 'run-' + r.id, cells: [
    '#' + r.id, r.mode, { text: r.status, cls: r.status === 'failed' || r.status === 'interrupted' ? 'bad' : r.status === 'finished' ? 'ok' : '' },
    r.owner || '', new Date(r.startedAt).toLocaleString(), new Date(r.heartbeatAt).toLocaleTimeString(),
    r.finishedAt ? new Date(r.finishedAt).toLocaleString() : '', r.died ? 'process died: ' + r.died : r.error || '',
  ] })))
}
${TICK_JS}`
