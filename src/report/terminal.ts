/**
 * Terminal summaries of the plan and verify reports: a table and a handful of lines, readable in
 * ten seconds. The JSON and HTML reports hold the details.
 */
import { formatDuration } from '../format-duration.ts'
import { LEGACY_ENTITIES } from '../model/index.ts'
import { acceptedRejectsLine, planAcceptedRejectsLine } from './accepted-rejects-line.ts'
import { conflictRows } from './conflict-rows.ts'
import type { PlanReport, ReasonCount, VerifyReport } from './schema.ts'

const n = (v: number) => v.toLocaleString('en-US')

function table(rows: readonly (readonly string[])[]): string[] {
  const widths: number[] = []
  for (const row of rows) {
    row.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, c.length)))
  }
  return rows.map((row) =>
    row
      .map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  )
}

/**
 * The update intents a delta would record, per entity by kind and policy; those whose item changed
 * on the platform (what `changes.conflicts` would do with them); and the vanished rows.
 */
function updateLines(r: PlanReport): string[] {
  const out: string[] = []
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    const parts = Object.entries(x.updates).flatMap(([kind, byPolicy]) =>
      Object.entries(byPolicy).map(([policy, c]) => `${n(c.count)} ${kind} (${policy}${c.samples[0] ? `, e.g. ${c.samples[0].legacyId}` : ''})`),
    )
    if (parts.length > 0) {
      out.push(`updates of loaded ${e}: ${parts.join(', ')}`)
    }
  }
  // Each line with its first sample in full: the reason names the platform's trigger and when it arrived.
  for (const c of conflictRows(r)) {
    const s = c.count.samples[0]
    out.push(
      `CHANGED ON THE PLATFORM: ${n(c.count.count)} ${c.kind} of loaded ${c.entity} ${c.outcome}${s ? ` — e.g. ${s.legacyId} → ${s.targetKey}: ${s.reason}` : ''}`,
    )
  }
  const vanished = LEGACY_ENTITIES.filter((e) => (r.entities[e].vanished ?? 0) > 0).map(
    (e) =>
      `${e} ${n(r.entities[e].vanished ?? 0)}${r.entities[e].vanishedRefused ? ' (TOO MANY: none would be recorded, over changes.vanished.maxShare — is the source right?)' : ''}`,
  )
  if (vanished.length > 0) {
    out.push(`loaded but gone from the source: ${vanished.join(', ')} (changes.vanished decides)`)
  }
  return out
}

/** The `k` most frequent reasons, then how many more there are (the JSON and HTML reports list them all). */
function top(map: Record<string, ReasonCount>, k = 3): string {
  const sorted = Object.entries(map).sort((a, b) => b[1].count - a[1].count)
  const shown = sorted.slice(0, k).map(([reason, r]) => `${n(r.count)} × ${reason} (e.g. ${r.samples.slice(0, 2).join(', ')})`)
  const rest = sorted.slice(k)
  if (rest.length > 0) {
    const items = rest.reduce((a, [, r]) => a + r.count, 0)
    shown.push(`+${rest.length} more ${rest.length === 1 ? 'reason' : 'reasons'} (${n(items)}; all in plan-report.json)`)
  }
  return shown.join('; ')
}

function when(iso: string): string {
  return iso.replace('T', ' ').replace(/:\d\d\.\d+Z$/, ' UTC')
}

/**
 * Every source row accounted for: per entity, rows read = records + problems, and the source's own
 * count beside it. A count that differs from the rows read is a line of its own, in capitals.
 */
export function sourceCheckLines(r: PlanReport): string[] {
  const parts = LEGACY_ENTITIES.map((e) => {
    const x = r.entities[e]
    const counted =
      x.sourceCount === null
        ? ''
        : x.sourceCount === x.sourceRows
          ? ` (source counts ${n(x.sourceCount)} ✓)`
          : ` (source counts ${n(x.sourceCount)} ✗)`
    return `${e} ${n(x.sourceRows)} = ${n(x.records)} + ${n(x.problems)}${counted}`
  })
  const lines = [`source rows = records + problems: ${parts.join(' · ')}`]
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    if (x.sourceCount === null || x.sourceCount === x.sourceRows) {
      continue
    }
    const diff = x.sourceCount - x.sourceRows
    lines.push(
      `COUNT MISMATCH ${e}: the source counts ${n(x.sourceCount)} rows, the read yielded ${n(x.sourceRows)} (${diff > 0 ? `${n(diff)} missed` : `${n(-diff)} read twice`}); gate it with --fail-on countMismatch>0`,
    )
  }
  return lines
}

/** The plan's files lines: the inventory, the files lane's time beside the load's, the warnings. */
function formatFilesPlan(f: NonNullable<PlanReport['files']>): string[] {
  const mib = (b: number) => `${(b / 1024 / 1024).toFixed(1)} MiB`
  const types = f.byType
    .slice(0, 5)
    .map((t) => `${t.type} ${n(t.files)} (${mib(t.bytes)})`)
    .join(', ')
  const lines = [
    `files (${f.mode}): ${n(f.files)} distinct, ${mib(f.bytes)} stated${f.unknownSize > 0 ? `, ${n(f.unknownSize)} of unknown size` : ''}${types ? ` — ${types}` : ''}`,
  ]
  const largest = f.largest[0]
  if (largest !== undefined) {
    lines.push(`largest file: ${largest.name} (${mib(largest.size ?? 0)}); over files.maxBytes: ${n(f.overMaxBytes.files)}`)
  }
  if (f.estimate !== null) {
    lines.push(`files lane: about ${formatDuration(f.estimate.seconds)} beside the load (${f.estimate.basis})`)
  }
  if (f.reachability !== null) {
    lines.push(`legacy attachment URLs sampled: ${n(f.reachability.reachable)} of ${n(f.reachability.checked)} answer`)
  }
  return [...lines, ...f.warnings.map((w) => `WARNING files: ${w}`)]
}

export function formatPlanReport(r: PlanReport): string {
  const lines: string[] = []
  lines.push(
    `chatferry plan · job ${r.jobId} · app ${r.appId} (${r.region}) · ${r.runId}`,
    `source snapshot ${r.sourceSnapshotAt ? when(r.sourceSnapshotAt) : '-'} · config ${r.configHash.slice(0, 12)} · chatferry ${r.chatferryVersion}`,
    '',
  )
  const checked = r.target !== null
  const rows: string[][] = [
    ['entity', 'source rows', 'to create', ...(checked ? ['present'] : []), 'unchanged', 'changed', 'skipped', 'rejected', 'requests', 'time@quota'],
  ]
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    rows.push([
      e,
      n(x.sourceRows),
      n(x.toCreate),
      ...(checked ? [x.alreadyPresent === null ? '-' : n(x.alreadyPresent)] : []),
      n(x.fates.loadedUnchanged),
      n(x.fates.loadedChanged),
      n(x.skipped.total),
      n(x.rejected.total),
      n(x.cost.requests),
      formatDuration(x.cost.seconds),
    ])
  }
  lines.push(...table(rows))
  lines.push('', ...sourceCheckLines(r))
  const q = r.cost.quota
  lines.push(
    '',
    `load: ${n(r.cost.requests)} requests at ${n(q.requestsPerMinute)} requests/min × ${q.itemsPerRequest} items (${q.source}) = ${formatDuration(r.cost.seconds)}; started now, done ${when(r.cost.finishIfNow)}`,
  )
  if (r.files !== undefined) {
    lines.push(...formatFilesPlan(r.files))
  }
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    if (x.rejected.total > 0) {
      lines.push(`rejected ${e}: ${top(x.rejected.byReason)}`)
    }
  }
  const accepted = planAcceptedRejectsLine(r)
  if (accepted !== undefined) {
    lines.push(accepted)
  }
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    if (x.skipped.total > 0) {
      lines.push(`skipped ${e}: ${top(x.skipped.byReason)}`)
    }
  }
  const changed = LEGACY_ENTITIES.filter((e) => r.entities[e].fates.loadedChanged > 0).map(
    (e) => `${e} ${n(r.entities[e].fates.loadedChanged)} (${Object.keys(r.entities[e].changedFields).slice(0, 4).join(', ')})`,
  )
  if (changed.length) {
    lines.push(`loaded but changed in the source since (not resent through the import): ${changed.join('; ')}`)
  }
  lines.push(...updateLines(r))
  const reread = LEGACY_ENTITIES.filter((e) => r.entities[e].fates.loadedChanged > 0 || Object.keys(r.entities[e].updates).length > 0)
  if (reread.length > 0) {
    // A delta reads only rows the source changed: a policy change reaches loaded items by a reread.
    lines.push(
      `to apply them: rows changed in the source, \`run --delta\`; a policy change, \`run --reread ${reread.join(',')}\` (reads them again, updates loaded items, deletes parts no longer needed)`,
    )
  }
  const referential = LEGACY_ENTITIES.flatMap((e) => Object.entries(r.entities[e].referential)).map(([k, v]) => `${n(v.count)} ${k}`)
  lines.push(
    `placeholders ${n(r.placeholders.count)} (owning ${n(r.placeholders.messages)} messages) · id renames ${n(r.ids.normalised)}, collisions ${n(r.ids.collisions.count)} · joinedAt clamped ${n(r.joinedAt.clamped.count)} · groups given a creation time ${n(r.derivedCreatedAt.groups.count)} · beyond retention (${r.retention.retentionDays} d, ${r.retention.oldMessages}) ${n(r.retention.beyondRetention)} messages`,
  )
  if (r.retention.edge?.advice) {
    lines.push(`RETENTION EDGE: ${r.retention.edge.advice}`)
  }
  if (referential.length) {
    lines.push(`referential: ${referential.join(', ')}`)
  }
  if (r.diff) {
    lines.push(`since ${r.diff.previousRunId} (${when(r.diff.previousGeneratedAt)}): ${r.diff.lines.join('; ')}`)
  } else {
    lines.push('first plan of this job: no previous plan to compare with')
  }
  if (r.target) {
    lines.push(
      r.target.ok
        ? `target ${r.target.baseUrl}: apiKey works with full access, region ${r.target.region.observed ?? 'not observable'}, already present: users ${n(r.target.existing.users.count)}, groups ${n(r.target.existing.groups.count)}, members ${n(r.target.existing.members.count)}`
        : `target ${r.target.baseUrl}: PROBLEMS: ${r.target.problems.join('; ')}`,
    )
  }
  for (const g of r.gates) {
    lines.push(`gate ${g.expression}: ${g.passed ? 'passed' : 'FAILED'} (value ${n(Math.round(g.value * 100) / 100)})`)
  }
  return `${lines.join('\n')}\n`
}

export function formatVerifyReport(r: VerifyReport): string {
  const lines: string[] = [
    `chatferry verify · job ${r.jobId} · app ${r.appId} (${r.region}) · ${r.runId}`,
    `source snapshot ${r.sourceSnapshotAt ? when(r.sourceSnapshotAt) : '-'} · config ${r.configHash.slice(0, 12)} · chatferry ${r.chatferryVersion}`,
    '',
  ]
  const rows: string[][] = [
    ['entity', 'ledger done', 'not loaded', 'on platform', 'missing', 'unexpected', 'duplicates', 'source rows', 'ledger records'],
  ]
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    rows.push([
      e,
      n(x.ledgerDone),
      n(x.ledgerOpen),
      n(x.platform),
      n(x.missing),
      n(x.unexpected),
      n(x.duplicates),
      x.source ? n(x.source.rows) : '-',
      x.source ? n(x.source.ledgerRecords) : '-',
    ])
  }
  lines.push(...table(rows), '')
  const m = r.messages
  lines.push(
    `messages: ${n(m.conversations)} conversations, ${n(m.conversationsMismatched)} with a different count${m.conversationsRelisted !== undefined ? `, ${n(m.conversationsRelisted)} listed again` : ''}; ${n(m.sampleCompared)} of ${n(m.sampleRequested)} sampled compared on ${m.fields.join(', ')}${m.idsComparable ? '' : ' (the platform lists no muid: counts only)'}`,
    ...messageMatchLines(m),
    `chat reads: ${n(r.chat.requests)} at ≤ ${n(r.chat.requestsPerMinute)}/min (${n(r.chat.rateLimited)} rate-limited)`,
  )
  const shown = r.mismatches.slice(0, 15)
  for (const x of shown) {
    lines.push(
      `  ${x.explained ? 'explained ' : ''}${x.kind} ${x.entity} ${x.targetKey ?? ''}${x.legacyId ? ` (legacy ${x.legacyId})` : ''}${x.field ? ` ${x.field}: expected ${JSON.stringify(x.expected)}, found ${JSON.stringify(x.actual)}` : ''} — ${x.note}`,
    )
  }
  const more = r.mismatches.length - shown.length + r.mismatchesNotListed
  if (more > 0) {
    lines.push(`  … and ${n(more)} more (see the JSON or HTML report)`)
  }
  const accepted = acceptedRejectsLine(r)
  if (accepted !== undefined) {
    lines.push(accepted)
  }
  if (r.files !== undefined) {
    const f = r.files
    lines.push(
      `files: ${n(f.reachable)} of ${n(f.copied)} copies answer in the store, ${n(f.sampleHashed)} hashed against their SHA-256; not copied: ${n(f.notCopied.failed)} failed, ${n(f.notCopied.skipped)} skipped, ${n(f.notCopied.planned)} to copy`,
      ...f.problems.slice(0, 15).map((p) => `  file ${p.name} at ${p.url}: ${p.problem}`),
    )
    if (f.problems.length > 0) {
      lines.push(`NOT verified: ${n(f.problems.length)} copied file(s) do not answer as recorded`)
    }
  }
  lines.push(
    r.totals.unexplained === 0
      ? `verified: ${r.totals.mismatches === 0 ? 'no mismatch' : `${n(r.totals.mismatches)} mismatches, all explained by the ledger`}`
      : `NOT verified: ${n(r.totals.unexplained)} unexplained mismatches (${n(r.totals.mismatches)} in all)`,
  )
  return `${lines.join('\n')}\n`
}

/** How listed messages were matched with the ledger, and a loud line when sampled ones were not. */
function messageMatchLines(m: VerifyReport['messages']): string[] {
  const lines: string[] = []
  if (m.listedBy !== undefined && m.sampleComparedBy !== undefined) {
    lines.push(
      `messages matched by legacy id in data.metadata: ${n(m.listedBy.legacyId)} listed, ${n(m.sampleComparedBy.legacyId)} compared; by fingerprint (sender, receiver, sentAt, text): ${n(m.listedBy.fingerprint)} listed, ${n(m.sampleComparedBy.fingerprint)} compared`,
    )
  }
  if (m.sampleUnmatched !== undefined && m.sampleUnmatched > 0) {
    lines.push(`UNMATCHED: ${n(m.sampleUnmatched)} sampled messages matched no listed message and were not compared (listed as missing)`)
  }
  return lines
}
