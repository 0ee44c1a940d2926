/**
 * Builds the plan report (schema `PlanReport` in `schema.ts`) from a dry run: per entity fates,
 * skips, rejects, outcomes and referential problems; the cost at the app's quota; the pre-flight
 * against the target; the diff against the previous plan of the same job.
 */
import { GROUP_CREATED_AT_OUTCOME_PREFIX } from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { DryRunResult } from '../plan/dry-run.ts'
import type { ReasonCount as SummaryReasonCount } from '../plan/plan-job.ts'
import type { FilesPlan } from './files-plan.ts'
import type { ReportConfig } from './report-context.ts'
import { retentionEdgeReport } from './retention-edge-report.ts'
import type { EntityPlan, PlanDiff, PlanReport, ReasonCount, TargetCheck } from './schema.ts'

const EMPTY: ReasonCount = { count: 0, samples: [] }

function total(map: Record<string, SummaryReasonCount>): number {
  return Object.values(map).reduce((a, r) => a + r.count, 0)
}

function sumOutcome(result: DryRunResult, key: string): ReasonCount {
  const out: ReasonCount = { count: 0, samples: [] }
  for (const e of LEGACY_ENTITIES) {
    const r = result.summary.entities[e].outcomes[key]
    if (!r) {
      continue
    }
    out.count += r.count
    for (const s of r.samples) {
      if (out.samples.length < 5) {
        out.samples.push(s)
      }
    }
  }
  return out
}

/** Groups given a creation time (outcomes `joinedAt: createdAt-<rule>` of groups), by rule. */
function derivedCreatedAt(result: DryRunResult): PlanReport['derivedCreatedAt'] {
  const prefix = `joinedAt: ${GROUP_CREATED_AT_OUTCOME_PREFIX}`
  const groups: ReasonCount = { count: 0, samples: [] }
  const byRule: Record<string, number> = {}
  for (const [key, r] of Object.entries(result.summary.entities.groups.outcomes)) {
    if (!key.startsWith(prefix)) {
      continue
    }
    byRule[key.slice(prefix.length)] = r.count
    groups.count += r.count
    groups.samples.push(...r.samples.slice(0, 5 - groups.samples.length))
  }
  return { groups, byRule }
}

export interface PlanReportInput {
  readonly header: Omit<
    PlanReport,
    | 'kind'
    | 'policies'
    | 'changes'
    | 'entities'
    | 'ids'
    | 'placeholders'
    | 'joinedAt'
    | 'derivedCreatedAt'
    | 'retention'
    | 'cost'
    | 'policyOutcomes'
    | 'files'
    | 'target'
    | 'diff'
    | 'gates'
  >
  readonly config: Pick<ReportConfig, 'file' | 'target' | 'policies'> & { readonly changes?: unknown }
  readonly result: DryRunResult
  readonly previous: PlanReport | undefined
  readonly target: TargetCheck | null
  /** The moment the estimate starts from (epoch ms). */
  readonly now: number
  /** The files section (`files-plan.ts`), when the job has one. */
  readonly files?: FilesPlan
}

/** One entity's part of the report: the dry run's counts and fates, and its cost at the quota. */
function entityPlan(input: PlanReportInput, e: LegacyEntity): EntityPlan {
  const { config, result, target } = input
  const quota = config.target.quota
  const s = result.summary.entities[e]
  const d = result.entities[e]
  const toCreate = d.fates.new + d.fates.pending + d.fates.pendingChanged + d.fates.replanned
  const requests = Math.ceil(toCreate / quota.itemsPerRequest)
  const existing = target?.existing[e]
  return {
    sourceRows: s.sourceRows,
    records: s.records,
    problems: s.problems,
    sourceCount: s.sourceCount,
    items: s.items + (e === 'users' ? Object.values(s.extras).reduce((a, n) => a + n, 0) : 0),
    fates: d.fates,
    toCreate,
    alreadyPresent: existing?.checked ? existing.count : null,
    changedFields: d.changedFields,
    skipped: { total: total(s.skipped), byReason: s.skipped },
    rejected: { total: total(s.rejected), byReason: s.rejected, samples: s.rejectSamples },
    outcomes: s.outcomes,
    referential: s.referential,
    extras: s.extras,
    changedSincePrevious: input.previous ? s.changedSince : null,
    samples: d.samples,
    cost: { requests, seconds: (requests / quota.requestsPerMinute) * 60 },
    updates: s.updates as EntityPlan['updates'],
    conflicts: d.conflicts as EntityPlan['conflicts'],
    vanished: s.vanished,
    vanishedRefused: s.vanishedRefused,
  }
}

export function buildPlanReport(input: PlanReportInput): PlanReport {
  const { config, result, target } = input
  const quota = config.target.quota
  const entities = {} as Record<LegacyEntity, EntityPlan>
  for (const e of LEGACY_ENTITIES) {
    entities[e] = entityPlan(input, e)
  }
  let start = 0
  const timeline = LEGACY_ENTITIES.map((e) => {
    const row = { entity: e, startSeconds: start, seconds: entities[e].cost.seconds, requests: entities[e].cost.requests }
    start += row.seconds
    return row
  })
  const requests = timeline.reduce((a, r) => a + r.requests, 0)
  const months = Object.entries(result.summary.months)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([month, m]) => ({ month, messages: m.messages, beyondRetention: m.beyondRetention }))
  const placeholderList = Object.entries(result.summary.placeholders).map(([uid, p]) => ({ uid, legacyId: p.legacyId, messages: p.messages }))
  const others = result.summary.placeholderOthers
  const report: PlanReport = {
    ...input.header,
    kind: 'plan',
    policies: JSON.parse(JSON.stringify(config.policies)) as Record<string, unknown>,
    changes: config.changes === undefined ? null : (JSON.parse(JSON.stringify(config.changes)) as Record<string, unknown>),
    entities,
    ids: {
      normalised: sumOutcome(result, 'ids: normalised').count,
      collisions: sumOutcome(result, 'ids: collision-rekeyed'),
    },
    placeholders: {
      count: placeholderList.length + others.placeholders,
      messages: placeholderList.reduce((a, p) => a + p.messages, 0) + others.messages,
      top: placeholderList.sort((a, b) => b.messages - a.messages || a.uid.localeCompare(b.uid)).slice(0, 100),
    },
    joinedAt: {
      clamped: result.summary.entities.members.outcomes['joinedAt: clamped'] ?? EMPTY,
      omitted: result.summary.entities.members.outcomes['joinedAt: omitted'] ?? EMPTY,
      rejected: result.summary.entities.members.rejected['joinedAt: joinedAt policy']?.count ?? 0,
    },
    derivedCreatedAt: derivedCreatedAt(result),
    retention: {
      retentionDays: config.policies.retention.retentionDays,
      oldMessages: config.policies.retention.oldMessages,
      windowStart: new Date(result.summary.retentionStart).toISOString(),
      beyondRetention: months.reduce((a, m) => a + m.beyondRetention, 0),
      months,
      edge: retentionEdgeReport(input, entities),
    },
    cost: {
      quota: { requestsPerMinute: quota.requestsPerMinute, itemsPerRequest: quota.itemsPerRequest, source: `target.quota in ${config.file}` },
      requests,
      seconds: start,
      startIfNow: new Date(input.now).toISOString(),
      finishIfNow: new Date(input.now + start * 1000).toISOString(),
      timeline,
    },
    policyOutcomes: result.summary.outcomes,
    ...(input.files !== undefined ? { files: input.files } : {}),
    target,
    diff: null,
    gates: [],
  }
  if (input.previous) {
    report.diff = diffPlans(input.previous, report)
  }
  return report
}

const n = (v: number) => v.toLocaleString('en-US')
const signed = (v: number) => `${v > 0 ? '+' : v < 0 ? '−' : '±'}${n(Math.abs(v))}`

function reasonDelta(before: Record<string, ReasonCount>, after: Record<string, ReasonCount>): Record<string, number> {
  const out: Record<string, number> = {}
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const d = (after[k]?.count ?? 0) - (before[k]?.count ?? 0)
    if (d !== 0) {
      out[k] = d
    }
  }
  return out
}

/** What changed between two plans of the same job. */
export function diffPlans(previous: PlanReport, current: PlanReport): PlanDiff {
  const lines: string[] = []
  const entities = {} as PlanDiff['entities']
  for (const e of LEGACY_ENTITIES) {
    const a = previous.entities[e]
    const b = current.entities[e]
    const rejectedByReason = reasonDelta(a.rejected.byReason, b.rejected.byReason)
    const skippedByReason = reasonDelta(a.skipped.byReason, b.skipped.byReason)
    const d = {
      sourceRows: b.sourceRows - a.sourceRows,
      items: b.items - a.items,
      toCreate: b.toCreate - a.toCreate,
      skipped: b.skipped.total - a.skipped.total,
      rejected: b.rejected.total - a.rejected.total,
      rejectedByReason,
      skippedByReason,
      changedSincePrevious: b.changedSincePrevious,
    }
    entities[e] = d
    const parts: string[] = []
    if (d.sourceRows !== 0) {
      parts.push(`${signed(d.sourceRows)} source rows`)
    }
    if (d.toCreate !== 0) {
      parts.push(`${signed(d.toCreate)} to create`)
    }
    for (const [r, v] of Object.entries(rejectedByReason)) {
      parts.push(`${signed(v)} rejected (${r})`)
    }
    for (const [r, v] of Object.entries(skippedByReason)) {
      parts.push(`${signed(v)} skipped (${r})`)
    }
    const changed = d.changedSincePrevious
    if (changed && changed.count > 0) {
      parts.push(`${n(changed.count)} changed or added since the previous snapshot (e.g. ${changed.samples.join(', ')})`)
    }
    if (parts.length > 0) {
      lines.push(`${e}: ${parts.join(', ')}`)
    }
  }
  const prevCost = previous.cost.seconds
  if (Math.round(prevCost) !== Math.round(current.cost.seconds)) {
    lines.push(`load time at quota: ${Math.round(prevCost)} s → ${Math.round(current.cost.seconds)} s`)
  }
  if (lines.length === 0) {
    lines.push('no change')
  }
  return {
    previousRunId: previous.runId,
    previousGeneratedAt: previous.generatedAt,
    previousSnapshotAt: previous.sourceSnapshotAt,
    entities,
    lines,
  }
}
