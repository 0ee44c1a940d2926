/** The terminal summary of planning into the ledger (`chatferry run`, the demo). */
import type { PlanJobSummary } from './plan-job.ts'
import type { EntityPlanSummary } from './plan-summary.ts'

/** `2 user.update, 1 user.deactivate (vanished 1); recorded: 3 planned, 0 reported…`, or '' when none. */
function updateLine(s: EntityPlanSummary): string {
  const found = Object.entries(s.updates).flatMap(([kind, byPolicy]) =>
    Object.entries(byPolicy ?? {}).map(([policy, e]) => `${e?.count ?? 0} ${kind}${policy === 'apply' ? '' : ` (${policy})`}`),
  )
  if (found.length === 0 && !s.vanished) {
    return ''
  }
  const r = s.updatesRecorded
  const recorded = `${r.planned} planned, ${r.reported} reported, ${r.ignored} ignored, ${r.superseded} superseded, ${r.repeated} seen before${
    r.conflicts > 0 ? `, ${r.conflicts} CONFLICT (changed on the platform, not applied)` : ''
  }${r.dropped > 0 ? `, ${r.dropped} dropped (platform wins)` : ''}`
  const gone = s.vanishedRefused
    ? ` (${s.vanished} gone from the source: TOO MANY, none recorded — over changes.vanished.maxShare; is the source right?)`
    : s.vanished
      ? ` (${s.vanished} gone from the source)`
      : ''
  return `${found.join(', ') || 'none'}${gone}; recorded: ${recorded}`
}

/** A few lines a person reads in seconds: rows read, items planned, skips and rejects per entity. */
export function formatPlanSummary(summary: PlanJobSummary): string {
  const lines: string[] = []
  for (const [entity, s] of Object.entries(summary.entities)) {
    if (s.alreadyRead) {
      lines.push(`${entity.padEnd(9)} read completed by an earlier run (--reread ${entity} reads it again)`)
      continue
    }
    const skipped = Object.values(s.skipped).reduce((a, r) => a + r.count, 0)
    const rejected = Object.values(s.rejected).reduce((a, r) => a + r.count, 0)
    const l = s.ledger
    // Extra items (placeholders, the system user) come from other entities' records: they are in
    // the ledger counts but not in the source rows, so they are named separately.
    const extras = Object.entries(s.extras)
    lines.push(
      `${entity.padEnd(9)} ${String(s.sourceRows).padStart(8)} rows → ${l.inserted} new, ${l.updated} updated, ${l.unchanged} unchanged` +
        `${l.loadedButChanged ? `, ${l.loadedButChanged} changed after loading` : ''}, ${skipped} skipped, ${rejected} rejected` +
        `${extras.length ? ` (the item counts include ${extras.map(([k, v]) => `${v} ${k}`).join(', ')} created for other records)` : ''}`,
    )
    for (const [reason, r] of Object.entries(s.rejected)) {
      lines.push(`            rejected ${r.count} × ${reason} (e.g. ${r.samples.join(', ')})`)
    }
    if (s.unplanned !== null) {
      lines.push(`            keys reconciled: ${s.unplanned} row${s.unplanned === 1 ? '' : 's'} the ledger never planned, planned now`)
    }
    const updates = updateLine(s)
    if (updates !== '') {
      lines.push(`            updates of loaded items: ${updates}`)
    }
  }
  const policyLines = Object.entries(summary.outcomes)
    .map(
      ([policy, outcomes]) =>
        `  ${policy}: ${Object.entries(outcomes)
          .map(([o, n]) => `${o} ${n}`)
          .join(', ')}`,
    )
    .sort()
  if (policyLines.length > 0) {
    lines.push('policy outcomes:', ...policyLines)
  }
  return `${lines.join('\n')}\n`
}
