/**
 * Self-contained HTML reports: one file, inline CSS, inline SVG charts drawn here, a few lines of
 * inline JavaScript (table filter), the JSON report embedded. Nothing is fetched when it opens.
 */
import { formatDuration } from '../format-duration.ts'
import { LEGACY_ENTITIES } from '../model/index.ts'
import { acceptedRejectsLine, planAcceptedRejectsLine } from './accepted-rejects-line.ts'
import { conflictRows } from './conflict-rows.ts'
import { countMismatch } from './fail-on.ts'
import type { PlanReport, ReasonCount, VerifyReport } from './schema.ts'

export const esc = (s: unknown) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
const n = (v: number) => v.toLocaleString('en-US')

const COLORS = {
  create: '#2b7bb9',
  unchanged: '#8bbf6a',
  changed: '#e0a030',
  skipped: '#b0b0b0',
  rejected: '#d0453a',
  inWindow: '#2b7bb9',
  beyond: '#d0453a',
} as const

const CSS = `
:root{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;color:#222;background:#fafafa}
body{margin:0 auto;max-width:1100px;padding:24px}
h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
.meta{color:#555;font-size:13px}.meta code{background:#eee;padding:1px 4px;border-radius:3px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin:16px 0}.card{background:#fff;border:1px solid #ddd;border-radius:6px;padding:10px 14px;min-width:140px}
.card b{display:block;font-size:20px}.card span{color:#666;font-size:12px}.bad b{color:#c0392b}.good b{color:#2e7d32}
table{border-collapse:collapse;width:100%;background:#fff;font-size:13px;margin:6px 0}th,td{border:1px solid #ddd;padding:4px 8px;text-align:left;vertical-align:top}
th{background:#f0f0f0}td.num{text-align:right;font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:1fr 1fr;gap:16px}.chart-box{background:#fff;border:1px solid #ddd;border-radius:6px;padding:8px}
.chart-box h3{font-size:14px;margin:2px 0 6px}svg text{font-size:11px;fill:#333}
.legend span{display:inline-block;margin-right:12px;font-size:12px}.legend i{display:inline-block;width:10px;height:10px;margin-right:4px;vertical-align:middle}
input.filter{margin:4px 0;padding:4px 6px;width:300px}
@media (max-width:800px){.charts{grid-template-columns:1fr}}
`

const SCRIPT = `
document.querySelectorAll('input.filter').forEach(function (input) {
  var table = document.getElementById(input.getAttribute('data-table'));
  if (!table) return;
  input.addEventListener('input', function () {
    var q = input.value.toLowerCase();
    table.querySelectorAll('tbody tr').forEach(function (tr) {
      tr.style.display = tr.textContent.toLowerCase().indexOf(q) === -1 ? 'none' : '';
    });
  });
});
`

function legend(items: readonly [string, string][]): string {
  return `<div class="legend">${items.map(([label, color]) => `<span><i style="background:${color}"></i>${esc(label)}</span>`).join('')}</div>`
}

function empty(width: number, text: string): string {
  return `<svg width="${width}" height="40" role="img"><text x="8" y="24">${esc(text)}</text></svg>`
}

/**
 * `text` cut to what fits in `px` at the charts' 11 px font (at most 7 px a character, the widest
 * average of the system fonts), with an ellipsis: a label never runs into its bar.
 */
function fit(text: string, px: number): string {
  const max = Math.max(4, Math.floor(px / 7))
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`
}

/** Horizontal stacked bars: one row per label, segments in order. */
export function stackedBars(
  rows: readonly { label: string; segments: readonly { value: number; color: string; title: string }[]; total?: string }[],
  width = 500,
  labelW = 150,
): string {
  const max = Math.max(1, ...rows.map((r) => r.segments.reduce((a, s) => a + s.value, 0)))
  // Room on the right for the total (up to 14 characters).
  const barW = width - labelW - 100
  const rowH = 26
  const parts: string[] = []
  rows.forEach((r, i) => {
    const y = 6 + i * rowH
    const label = fit(r.label, labelW - 12)
    const text = `<text x="4" y="${y + 14}">${esc(label)}</text>`
    // A cut label keeps its whole text as a tooltip.
    parts.push(label === r.label ? text : `<g><title>${esc(r.label)}</title>${text}</g>`)
    let x = labelW
    let totalValue = 0
    for (const s of r.segments) {
      if (s.value <= 0) {
        continue
      }
      const w = Math.max(1, (s.value / max) * barW)
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="18" fill="${s.color}"><title>${esc(`${s.title}: ${n(s.value)}`)}</title></rect>`,
      )
      x += w
      totalValue += s.value
    }
    parts.push(`<text x="${(x + 4).toFixed(1)}" y="${y + 14}">${esc(r.total ?? n(totalValue))}</text>`)
  })
  return `<svg width="${width}" height="${rows.length * rowH + 12}" role="img">${parts.join('')}</svg>`
}

/** Items planned for other records (placeholders, the system user): they have no source row. */
function extraItems(x: PlanReport['entities']['users']): number {
  return Object.values(x.extras).reduce((a, v) => a + v, 0)
}

function itemsChart(r: PlanReport): string {
  const rows = LEGACY_ENTITIES.map((e) => {
    const x = r.entities[e]
    const extras = extraItems(x)
    const sum = x.toCreate + x.fates.loadedUnchanged + x.fates.loadedChanged + x.skipped.total + x.rejected.total
    return {
      label: e,
      // The bar holds the source rows' fates and the extra items (placeholders, the system user);
      // its total says both, as the table does, so the two never seem to disagree.
      total: sum === x.sourceRows + extras ? (extras > 0 ? `${n(x.sourceRows)} + ${n(extras)} extra` : n(x.sourceRows)) : `${n(sum)} items`,
      segments: [
        { value: x.toCreate, color: COLORS.create, title: 'to create' },
        { value: x.fates.loadedUnchanged, color: COLORS.unchanged, title: 'loaded, unchanged' },
        { value: x.fates.loadedChanged, color: COLORS.changed, title: 'loaded, changed since' },
        { value: x.skipped.total, color: COLORS.skipped, title: 'skipped by policy' },
        { value: x.rejected.total, color: COLORS.rejected, title: 'rejected' },
      ],
    }
  })
  return (
    stackedBars(rows) +
    legend([
      ['to create', COLORS.create],
      ['loaded, unchanged', COLORS.unchanged],
      ['loaded, changed', COLORS.changed],
      ['skipped', COLORS.skipped],
      ['rejected', COLORS.rejected],
    ])
  )
}

function reasonsChart(byEntity: readonly [string, Record<string, ReasonCount>][], color: string, none: string): string {
  const rows = byEntity
    .flatMap(([e, map]) => Object.entries(map).map(([reason, c]) => ({ label: `${e}: ${reason}`, full: `${e}: ${reason}`, count: c.count })))
    .sort((a, b) => b.count - a.count)
    .slice(0, 12)
  if (rows.length === 0) {
    return empty(500, none)
  }
  return stackedBars(
    rows.map((x) => ({ label: x.label, segments: [{ value: x.count, color, title: x.full }] })),
    520,
    230,
  )
}

function monthsChart(r: PlanReport): string {
  const months = r.retention.months
  if (months.length === 0) {
    return empty(500, 'no messages')
  }
  const width = 500
  const height = 180
  const left = 52
  const bottom = 30
  // The top 20 px hold the window's label; bars stay below it.
  const top = 20
  const max = Math.max(1, ...months.map((m) => m.messages))
  const slot = (width - left - 10) / months.length
  const bw = Math.max(1, slot * 0.8)
  const plot = height - bottom - top
  const parts: string[] = [`<line x1="${left}" y1="${height - bottom}" x2="${width - 5}" y2="${height - bottom}" stroke="#999"/>`]
  parts.push(`<text x="2" y="${top + 10}">${n(max)}</text><text x="2" y="${height - bottom}">0</text>`)
  // A month label ("24-01") is about 32 px wide: label every step-th month so they never touch.
  const step = Math.max(1, Math.ceil(38 / slot))
  months.forEach((m, i) => {
    const x = left + i * slot
    const inWindow = m.messages - m.beyondRetention
    const hBeyond = (m.beyondRetention / max) * plot
    const hIn = (inWindow / max) * plot
    let y = height - bottom
    if (m.beyondRetention > 0) {
      y -= hBeyond
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${Math.max(1, hBeyond).toFixed(1)}" fill="${COLORS.beyond}"><title>${esc(`${m.month}: ${n(m.beyondRetention)} beyond retention`)}</title></rect>`,
      )
    }
    if (inWindow > 0) {
      y -= hIn
      parts.push(
        `<rect x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${bw.toFixed(1)}" height="${Math.max(1, hIn).toFixed(1)}" fill="${COLORS.inWindow}"><title>${esc(`${m.month}: ${n(inWindow)} within retention`)}</title></rect>`,
      )
    }
    if (i % step === 0) {
      parts.push(`<text x="${x.toFixed(1)}" y="${height - bottom + 14}">${esc(m.month.slice(2))}</text>`)
    }
  })
  const wx = windowX(r.retention.windowStart, months, left, slot, bw)
  const label = `window ${r.retention.windowStart.slice(0, 10)}`
  // Next to the marker, on the side with room (about 6.5 px a character).
  const room = wx + 4 + label.length * 6.5 <= width
  parts.push(
    `<path data-marker="retention" d="M${wx.toFixed(1)} 4 V${height - bottom}" stroke="#333" stroke-dasharray="4 3"/><text x="${(room ? wx + 4 : wx - 4).toFixed(1)}" y="13"${room ? '' : ' text-anchor="end"'}>${esc(label)}</text>`,
  )
  return (
    `<svg width="${width}" height="${height}" role="img">${parts.join('')}</svg>` +
    legend([
      [`within ${r.retention.retentionDays} days`, COLORS.inWindow],
      [`beyond (${r.retention.oldMessages})`, COLORS.beyond],
    ])
  )
}

/**
 * Where the retention window starts on the months axis. Inside the bar of the month it starts in,
 * at the share of that month already past (the bar holds messages of both sides); in the gap
 * before the first later month when no message was sent in its month; after the last bar when the
 * window starts after every month shown. (It used to sit before the bar of the window's month,
 * on the wrong side of that month's old messages, and missed months without messages.)
 */
export function windowX(windowStart: string, months: readonly { month: string }[], left: number, slot: number, bw: number): number {
  const start = new Date(windowStart)
  const month = windowStart.slice(0, 7)
  const at = months.findIndex((m) => m.month === month)
  if (at !== -1) {
    const first = Date.UTC(start.getUTCFullYear(), start.getUTCMonth(), 1)
    const next = Date.UTC(start.getUTCFullYear(), start.getUTCMonth() + 1, 1)
    return left + at * slot + ((start.getTime() - first) / (next - first)) * bw
  }
  const later = months.findIndex((m) => m.month > month)
  if (later === -1) {
    return left + (months.length - 1) * slot + bw + (slot - bw) / 2
  }
  return later === 0 ? left - 2 : left + later * slot - (slot - bw) / 2
}

function timelineChart(r: PlanReport): string {
  const total = Math.max(1, r.cost.seconds)
  const width = 500
  const left = 80
  const barW = width - left - 20
  const parts: string[] = []
  r.cost.timeline.forEach((t, i) => {
    const y = 6 + i * 26
    parts.push(`<text x="4" y="${y + 14}">${esc(t.entity)}</text>`)
    const x = left + (t.startSeconds / total) * barW
    const w = Math.max(1, (t.seconds / total) * barW)
    parts.push(
      `<rect x="${x.toFixed(1)}" y="${y}" width="${w.toFixed(1)}" height="18" fill="${COLORS.create}"><title>${esc(`${t.entity}: ${n(t.requests)} requests, ${formatDuration(t.seconds)}`)}</title></rect>`,
    )
    // Right of the bar when it fits, else inside its end in white: never over the bar's colour.
    const text = formatDuration(t.seconds)
    const fits = x + w + 4 + text.length * 6.5 <= width
    parts.push(
      fits
        ? `<text x="${(x + w + 4).toFixed(1)}" y="${y + 14}">${esc(text)}</text>`
        : `<text x="${(x + w - 4).toFixed(1)}" y="${y + 14}" text-anchor="end" style="fill:#fff">${esc(text)}</text>`,
    )
  })
  const y = 6 + r.cost.timeline.length * 26
  parts.push(`<path d="M${left} ${y} H${left + barW}" stroke="#999"/>`)
  parts.push(
    `<text x="${left}" y="${y + 14}">now</text><text x="${left + barW}" y="${y + 14}" text-anchor="end">${esc(r.cost.finishIfNow.slice(0, 16).replace('T', ' '))} UTC</text>`,
  )
  return `<svg width="${width}" height="${y + 22}" role="img">${parts.join('')}</svg>`
}

/**
 * The pre-flight's region row. It was one template over possibly missing values, which read
 * "us configured, not observable observed": now the observed part is a sentence of its own.
 */
export function regionLine(region: NonNullable<PlanReport['target']>['region']): string {
  const configured = region.configured ? `configured ${region.configured}` : 'no region configured'
  if (region.observed === null) {
    return `${configured}; the app's region could not be observed (${region.note || 'no source for it'})`
  }
  const verdict = region.matches === false ? 'MISMATCH' : 'matches'
  return `${configured}; observed ${region.observed} (${region.note}): ${verdict}`
}

function chartBox(title: string, body: string, id: string): string {
  return `<div class="chart-box" data-chart="${esc(id)}"><h3>${esc(title)}</h3>${body}</div>`
}

export function card(label: string, value: string, cls = ''): string {
  return `<div class="card ${cls}"><b>${esc(value)}</b><span>${esc(label)}</span></div>`
}

export function tableHtml(id: string, head: readonly string[], rows: readonly (readonly (string | number)[])[], filter = false): string {
  if (rows.length === 0) {
    return '<p class="meta">none</p>'
  }
  const body = rows
    .map((r) => `<tr>${r.map((c) => (typeof c === 'number' ? `<td class="num">${n(c)}</td>` : `<td>${esc(c)}</td>`)).join('')}</tr>`)
    .join('')
  return `${filter ? `<input class="filter" data-table="${esc(id)}" placeholder="filter…">` : ''}<table id="${esc(id)}"><thead><tr>${head.map((h) => `<th>${esc(h)}</th>`).join('')}</tr></thead><tbody>${body}</tbody></table>`
}

function reasonRows(r: PlanReport, pick: (e: PlanReport['entities']['users']) => Record<string, ReasonCount>): (string | number)[][] {
  return LEGACY_ENTITIES.flatMap((e) => Object.entries(pick(r.entities[e])).map(([reason, c]) => [e, reason, c.count, c.samples.join(', ')]))
}

/**
 * What a reason names: `unreadable text` is the field `text` that could not be read, `customData:
 * invalid` the field `customData` the mapping refused. Other reasons name no single field.
 */
export function reasonField(reason: string): { field: string; problem: string } {
  const unreadable = /^unreadable (.+)$/.exec(reason)
  if (unreadable?.[1]) {
    return { field: unreadable[1], problem: 'unreadable in the source row' }
  }
  const named = /^([A-Za-z_][\w.[\]]*): (.+)$/.exec(reason)
  if (named?.[1] && named[2]) {
    return { field: named[1], problem: named[2] }
  }
  return { field: '-', problem: reason }
}

/**
 * The rejected rows, one per entity and reason: the field at fault, the problem, the count, and each
 * sample as `legacy id → target key` (the key the ledger keeps the reject under: `~legacy:<id>…`
 * for a row that never became an item of the platform's), with its own problem when it says more
 * than the reason. Reports written before rejects carried their samples fall back to the fate
 * samples' keys.
 */
function rejectRows(r: PlanReport): (string | number)[][] {
  return LEGACY_ENTITIES.flatMap((e) => {
    const { byReason, samples } = r.entities[e].rejected
    const keys = new Map(Object.values(r.entities[e].samples).flatMap((list) => list.map((s) => [s.legacyId, s.targetKey] as const)))
    return Object.entries(byReason).map(([reason, c]) => {
      const { field, problem } = reasonField(reason)
      const detailed = samples[reason]
      if (detailed !== undefined && detailed.length > 0) {
        const fields = [...new Set(detailed.map((d) => d.field))]
        const shown = detailed.map((d) => `${d.legacyId} → ${d.targetKey}${d.problem !== problem ? ` (${d.problem})` : ''}`)
        return [e, fields.length === 1 ? (fields[0] ?? field) : field, problem, c.count, shown.join('; ')]
      }
      const unreadable = reason.startsWith('unreadable ')
      const shown = c.samples.map((id) => `${id} → ${keys.get(id) ?? (unreadable ? 'no item (row unreadable)' : 'no item (not mapped)')}`)
      return [e, field, problem, c.count, shown.join('; ')]
    })
  })
}

function page(
  title: string,
  header: {
    runId: string
    jobId: string
    appId: string
    region: string
    chatferryVersion: string
    configHash: string
    sourceSnapshotAt: string | null
    generatedAt: string
  },
  body: string,
  json: unknown,
): string {
  const meta = `job <code>${esc(header.jobId)}</code> · app <code>${esc(header.appId)}</code> (${esc(header.region)}) · run <code>${esc(header.runId)}</code><br>
chatferry ${esc(header.chatferryVersion)} · config <code>${esc(header.configHash.slice(0, 16))}</code> · source snapshot ${esc(header.sourceSnapshotAt ?? '-')} · generated ${esc(header.generatedAt)}`
  return htmlDocument(title, meta, body, json)
}

/** A self-contained report page: the title, a meta line (HTML), the body, the JSON report embedded; the table filter script. */
export function htmlDocument(title: string, metaHtml: string, body: string, json: unknown): string {
  const data = JSON.stringify(json).replace(/</g, '\\u003c')
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:">
<title>${esc(title)}</title><style>${CSS}</style></head><body>
<h1>${esc(title)}</h1>
<div class="meta">${metaHtml}</div>
${body}
<script type="application/json" id="report-data">${data}</script>
<script>${SCRIPT}</script>
</body></html>
`
}

/** The plan report as one HTML file. */
export function renderPlanHtml(r: PlanReport): string {
  const create = LEGACY_ENTITIES.reduce((a, e) => a + r.entities[e].toCreate, 0)
  const rejected = LEGACY_ENTITIES.reduce((a, e) => a + r.entities[e].rejected.total, 0)
  const skipped = LEGACY_ENTITIES.reduce((a, e) => a + r.entities[e].skipped.total, 0)
  const failed = r.gates.filter((g) => !g.passed)
  const mismatched = LEGACY_ENTITIES.filter((e) => countMismatch(r.entities[e]) > 0)
  const cards = [
    ...(mismatched.length ? [card('source count mismatch', mismatched.join(', '), 'bad')] : []),
    card('items to create', n(create)),
    card('skipped by policy', n(skipped)),
    card('rejected', n(rejected), rejected > 0 ? 'bad' : 'good'),
    card(`load at ${n(r.cost.quota.requestsPerMinute)} req/min`, formatDuration(r.cost.seconds)),
    card('finish if started now', r.cost.finishIfNow.slice(0, 16).replace('T', ' ')),
    ...(r.gates.length ? [card('CI gates', failed.length ? `${failed.length} failed` : 'passed', failed.length ? 'bad' : 'good')] : []),
  ].join('')
  const entityRows = LEGACY_ENTITIES.map((e) => {
    const x = r.entities[e]
    const counted = x.sourceCount === null ? '-' : `${n(x.sourceCount)}${x.sourceCount === x.sourceRows ? '' : ' ✗ MISMATCH'}`
    return [
      e,
      x.sourceRows,
      x.records,
      x.problems,
      counted,
      x.items,
      extraItems(x),
      x.fates.new,
      x.fates.pending + x.fates.pendingChanged + x.fates.replanned,
      x.alreadyPresent === null ? '-' : x.alreadyPresent,
      x.fates.loadedUnchanged,
      x.fates.loadedChanged,
      x.skipped.total,
      x.rejected.total,
      x.cost.requests,
      formatDuration(x.cost.seconds),
    ]
  })
  const samples = LEGACY_ENTITIES.flatMap((e) =>
    Object.entries(r.entities[e].samples).flatMap(([fate, list]) => list.map((s) => [e, fate, s.legacyId, s.targetKey])),
  )
  const updateRows = LEGACY_ENTITIES.flatMap((e) =>
    Object.entries(r.entities[e].updates).flatMap(([kind, byPolicy]) =>
      Object.entries(byPolicy).map(([policy, c]) => [
        e,
        kind,
        policy,
        c.count,
        c.samples.map((x) => `${x.legacyId} → ${x.targetKey}: ${x.reason}`).join('; '),
      ]),
    ),
  )
  const conflictTable = conflictRows(r).map((c) => [
    c.entity,
    c.kind,
    c.outcome,
    c.count.count,
    c.count.samples.map((x) => `${x.legacyId} → ${x.targetKey}: ${x.reason}`).join('; '),
  ])
  const vanishedLine = LEGACY_ENTITIES.map(
    (e) =>
      `${e}: ${r.entities[e].vanished === null ? 'not compared' : n(r.entities[e].vanished ?? 0)}${r.entities[e].vanishedRefused ? ' (too many: none would be recorded, over changes.vanished.maxShare)' : ''}`,
  ).join(' · ')
  const changedRows = LEGACY_ENTITIES.flatMap((e) =>
    Object.entries(r.entities[e].changedFields).map(([f, c]) => [e, f, c.count, c.samples.join(', ')]),
  )
  const body = `
<div class="cards">${cards}</div>
<h2>Per entity</h2>
${tableHtml('entities', ['entity', 'source rows', 'records', 'problems', 'source count', 'items', 'extra items', 'new', 'pending', 'already present', 'loaded, unchanged', 'loaded, changed', 'skipped', 'rejected', 'requests', 'time at quota'], entityRows)}
${planAcceptedRejectsLine(r) === undefined ? '' : `<p class="meta">${esc(planAcceptedRejectsLine(r) as string)}</p>`}
<p class="meta">Quota used for the estimate: ${n(r.cost.quota.requestsPerMinute)} requests/min × ${r.cost.quota.itemsPerRequest} items per request (${esc(r.cost.quota.source)}). Started ${esc(r.cost.startIfNow)}, the load would finish ${esc(r.cost.finishIfNow)}.</p>
<h2>Charts</h2>
<div class="charts">
${chartBox('Items per entity and fate', itemsChart(r), 'items')}
${chartBox(
  'Rejects by reason',
  reasonsChart(
    LEGACY_ENTITIES.map((e) => [e, r.entities[e].rejected.byReason] as [string, Record<string, ReasonCount>]),
    COLORS.rejected,
    'no rejects',
  ),
  'rejects',
)}
${chartBox('Messages per month vs the retention window', monthsChart(r), 'months')}
${chartBox('Projected load timeline', timelineChart(r), 'timeline')}
</div>
<h2>Changes since the previous plan</h2>
${r.diff ? `<p class="meta">Compared with <code>${esc(r.diff.previousRunId)}</code> of ${esc(r.diff.previousGeneratedAt)} (snapshot ${esc(r.diff.previousSnapshotAt ?? '-')}).</p><ul>${r.diff.lines.map((l) => `<li>${esc(l)}</li>`).join('')}</ul>` : '<p class="meta">First plan of this job.</p>'}
${
  r.target
    ? `<h2>Target pre-flight</h2>${tableHtml(
        'target',
        ['check', 'result'],
        [
          ['base URL', r.target.baseUrl],
          ['apiKey works', String(r.target.apiKey.works)],
          ['full access', String(r.target.apiKey.fullAccess ?? 'unknown')],
          ['region', regionLine(r.target.region)],
          ...LEGACY_ENTITIES.filter((e) => e !== 'messages').map((e) => [
            `${e} already present`,
            r.target!.existing[e].checked ? `${n(r.target!.existing[e].count)} ${r.target!.existing[e].samples.join(', ')}` : 'not checked',
          ]),
          ['problems', r.target.problems.join('; ') || 'none'],
        ],
      )}`
    : ''
}
${
  r.gates.length
    ? `<h2>CI gates</h2>${tableHtml(
        'gates',
        ['expression', 'value', 'result'],
        r.gates.map((g) => [g.expression, g.value, g.passed ? 'passed' : 'FAILED']),
      )}`
    : ''
}
<h2>Rejected</h2>${tableHtml('rejected', ['entity', 'field', 'problem', 'count', 'sample legacy id → target key'], rejectRows(r), true)}
<h2>Skipped by policy</h2>${tableHtml(
    'skipped',
    ['entity', 'policy: reason', 'count', 'sample legacy ids'],
    reasonRows(r, (x) => x.skipped.byReason),
    true,
  )}
<h2>Referential problems</h2>${tableHtml(
    'referential',
    ['entity', 'problem', 'count', 'sample legacy ids'],
    reasonRows(r, (x) => x.referential),
  )}
<h2>Loaded but changed since (what changed)</h2>${tableHtml('changed', ['entity', 'field', 'count', 'sample legacy ids'], changedRows)}
<h2>Updates a delta would record (changes:)</h2>${tableHtml('updates', ['entity', 'kind', 'policy', 'count', 'samples (legacy id → target key: reason)'], updateRows)}
<h2>Of those, changed on the platform since chatferry wrote them (changes.conflicts)</h2>${tableHtml(
    'conflicts',
    ['entity', 'kind', 'what the delta would do', 'count', 'samples (legacy id → target key: reason, platform trigger, received)'],
    conflictTable,
  )}
<p class="meta">Loaded items gone from the source: ${esc(vanishedLine)}.</p>
<h2>Placeholders (${n(r.placeholders.count)}, owning ${n(r.placeholders.messages)} messages)</h2>${tableHtml(
    'placeholders',
    ['uid', 'legacy id', 'messages'],
    r.placeholders.top.map((p) => [p.uid, p.legacyId, p.messages]),
  )}
<h2>Id renames, joinedAt clamps, creation times, retention</h2>
${tableHtml(
  'misc',
  ['what', 'count', 'samples'],
  [
    ['ids normalised to the platform rule', r.ids.normalised, ''],
    ['id collisions re-keyed', r.ids.collisions.count, r.ids.collisions.samples.join(', ')],
    ['member joinedAt clamped', r.joinedAt.clamped.count, r.joinedAt.clamped.samples.join(', ')],
    ['member joinedAt omitted', r.joinedAt.omitted.count, r.joinedAt.omitted.samples.join(', ')],
    [
      `groups without a creation time, given one${
        Object.keys(r.derivedCreatedAt.byRule).length
          ? ` (${Object.entries(r.derivedCreatedAt.byRule)
              .map(([k, v]) => `${k} ${n(v)}`)
              .join(', ')})`
          : ''
      }`,
      r.derivedCreatedAt.groups.count,
      r.derivedCreatedAt.groups.samples.join(', '),
    ],
    [`messages beyond ${r.retention.retentionDays} days (${r.retention.oldMessages})`, r.retention.beyondRetention, ''],
    [`messages aging out before the load reaches them`, r.retention.edge?.agingOut ?? 0, r.retention.edge?.advice ?? ''],
  ],
)}
<h2>Policy outcomes</h2>${tableHtml(
    'outcomes',
    ['entity', 'policy: outcome', 'count', 'sample legacy ids'],
    reasonRows(r, (x) => x.outcomes),
    true,
  )}
<h2>Samples</h2>${tableHtml('samples', ['entity', 'fate', 'legacy id', 'target key'], samples, true)}
`
  return page(`chatferry plan — ${r.jobId}`, r, body, r)
}

/**
 * Verify's sign-off: per entity, the plan's counts next to the ledger's and the platform's, and a
 * verdict a reviewer can sign: the platform holds what the ledger created or found present, and
 * every planned item ended created, present, skipped or rejected.
 */
function actualVsPlanSection(r: VerifyReport): string {
  const a = r.actualVsPlan
  if (!a) {
    return ''
  }
  const rows = LEGACY_ENTITIES.map((e) => {
    const x = a.entities[e]
    const onPlatform = x.ledger.created + x.ledger.alreadyPresent
    const problems: string[] = []
    if (x.platform !== onPlatform) {
      problems.push(`platform ${x.platform - onPlatform > 0 ? '+' : ''}${n(x.platform - onPlatform)} vs ledger`)
    }
    if (x.ledger.remaining > 0) {
      problems.push(`${n(x.ledger.remaining)} not loaded yet`)
    }
    if (x.plan) {
      const diff = (what: string, planned: number, actual: number) =>
        planned === actual ? [] : [`${what} ${actual - planned > 0 ? '+' : ''}${n(actual - planned)} vs plan`]
      problems.push(
        // Whether the plan ran before the load or after it, what it sends plus what it found
        // loaded is what the ledger should call created or present.
        ...diff('created or present', x.plan.create + x.plan.loaded + (x.plan.createdSince ?? 0), onPlatform),
        ...diff('skipped', x.plan.skipped, x.ledger.skipped),
        ...diff('rejected', x.plan.rejected, x.ledger.rejected),
      )
    }
    return [
      e,
      x.plan ? `${n(x.plan.create)}${x.plan.createdSince ? ` + ${n(x.plan.createdSince)} by deltas since` : ''}` : '-',
      x.plan ? x.plan.loaded : '-',
      x.plan ? x.plan.skipped : '-',
      x.plan ? x.plan.rejected : '-',
      x.ledger.created,
      x.ledger.alreadyPresent,
      x.ledger.skipped,
      x.ledger.rejected,
      x.ledger.remaining,
      x.platform,
      problems.length === 0 ? 'as planned' : problems.join('; '),
    ]
  })
  const source = a.planRunId
    ? `Plan <code>${esc(a.planRunId)}</code> of ${esc(a.planGeneratedAt ?? '-')}${a.deltasSince ? `, and the new items of the ${n(a.deltasSince)} delta run(s) since` : ''}.`
    : 'No plan report for this job (run <code>chatferry plan</code> before loading to have one): only the ledger and the platform are compared.'
  return `<h2>Actual vs plan</h2>
<p class="meta">${source} Planned: what the dry run said a load would create, skip and reject. Ledger: what the load did. Platform: what verify counted there now.</p>
${tableHtml('actual-vs-plan', ['entity', 'planned: create', 'planned: already loaded', 'planned: skip', 'planned: reject', 'ledger: created', 'ledger: already present', 'ledger: skipped', 'ledger: rejected', 'ledger: not loaded', 'on platform', 'sign-off'], rows)}`
}

/** The verify report as one HTML file. */
export function renderVerifyHtml(r: VerifyReport): string {
  const ok = r.totals.unexplained === 0
  const cards = [
    card('result', ok ? 'verified' : 'NOT verified', ok ? 'good' : 'bad'),
    card('unexplained mismatches', n(r.totals.unexplained), r.totals.unexplained ? 'bad' : 'good'),
    card('all mismatches', n(r.totals.mismatches)),
    card('messages compared field by field', n(r.messages.sampleCompared)),
    card('chat reads', n(r.chat.requests)),
  ].join('')
  const countsChart = stackedBars(
    LEGACY_ENTITIES.flatMap((e) => [
      { label: `${e} ledger`, segments: [{ value: r.entities[e].ledgerDone, color: COLORS.create, title: 'done in the ledger' }] },
      { label: `${e} platform`, segments: [{ value: r.entities[e].platform, color: COLORS.unchanged, title: 'on the platform' }] },
    ]),
  )
  const kinds = new Map<string, number>()
  for (const m of r.mismatches) {
    kinds.set(`${m.entity}: ${m.kind}`, (kinds.get(`${m.entity}: ${m.kind}`) ?? 0) + 1)
  }
  const mismatchChart =
    kinds.size === 0
      ? empty(500, 'no mismatches')
      : stackedBars([...kinds].map(([label, count]) => ({ label, segments: [{ value: count, color: COLORS.rejected, title: label }] })))
  const body = `
<div class="cards">${cards}</div>
<h2>Per entity</h2>
${tableHtml(
  'entities',
  ['entity', 'ledger done', 'not loaded', 'on platform', 'missing', 'unexpected', 'duplicates', 'source rows', 'ledger records'],
  LEGACY_ENTITIES.map((e) => {
    const x = r.entities[e]
    return [
      e,
      x.ledgerDone,
      x.ledgerOpen,
      x.platform,
      x.missing,
      x.unexpected,
      x.duplicates,
      x.source ? x.source.rows : '-',
      x.source ? x.source.ledgerRecords : '-',
    ]
  }),
)}
<p class="meta">${n(r.messages.conversations)} conversations, ${n(r.messages.conversationsMismatched)} with a different message count; ${n(r.messages.sampleCompared)} of ${n(r.messages.sampleRequested)} sampled messages compared on ${esc(r.messages.fields.join(', '))}${r.messages.sampleComparedBy ? ` (${n(r.messages.sampleComparedBy.legacyId)} matched by legacy id, ${n(r.messages.sampleComparedBy.fingerprint)} by fingerprint)` : ''}${r.messages.sampleUnmatched ? `; <strong>${n(r.messages.sampleUnmatched)} sampled messages matched no listed message</strong> (listed as missing)` : ''}. Chat reads: ${n(r.chat.requests)} at ≤ ${n(r.chat.requestsPerMinute)}/min.</p>
${acceptedRejectsLine(r) === undefined ? '' : `<p class="meta">${esc(acceptedRejectsLine(r) as string)}</p>`}
${actualVsPlanSection(r)}
<h2>Charts</h2>
<div class="charts">
${chartBox('Ledger vs platform', countsChart, 'counts')}
${chartBox('Mismatches by entity and kind', mismatchChart, 'mismatches')}
</div>
<h2>Mismatches</h2>
${tableHtml(
  'mismatches',
  ['entity', 'kind', 'target key', 'legacy id', 'field', 'expected', 'found', 'explained', 'note'],
  r.mismatches.map((m) => [
    m.entity,
    m.kind,
    m.targetKey ?? '',
    m.legacyId ?? '',
    m.field ?? '',
    m.expected === undefined ? '' : JSON.stringify(m.expected),
    m.actual === undefined ? '' : JSON.stringify(m.actual),
    m.explained ? 'yes' : 'no',
    m.note,
  ]),
  true,
)}
${r.mismatchesNotListed ? `<p class="meta">… and ${n(r.mismatchesNotListed)} more not listed.</p>` : ''}
`
  return page(`chatferry verify — ${r.jobId}`, r, body, r)
}
