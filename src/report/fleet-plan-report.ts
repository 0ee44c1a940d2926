/**
 * The fleet plan report (`chatferry fleet plan`): one row per tenant from its own plan report
 * (plan-report.ts, the dry run of its job) and the fleet's totals — items to create, skipped and
 * rejected, import requests and the time at each app's quota, rejects by reason. Tenants load in
 * parallel, each at its own app's quota, so the fleet's time at quota is its slowest tenant's; the
 * sum is given too (the time one app would need). A tenant whose plan failed (unreachable source, a
 * bad configuration) is a row with its error. Terminal text here; HTML in fleet-plan-html.ts.
 */
import { z } from 'zod'

import { formatDuration } from '../format-duration.ts'
import { LEGACY_ENTITIES } from '../model/index.ts'
import type { PlanReport } from './schema.ts'

const PerEntity = z.object({ users: z.number().int(), groups: z.number().int(), members: z.number().int(), messages: z.number().int() })

/** What a plan costs and drops: a tenant's, or the fleet's summed. */
const PlanCounts = {
  toCreate: PerEntity,
  skipped: z.number().int(),
  rejected: z.number().int(),
  rejectsByReason: z.record(z.string(), z.number().int()),
  requests: z.number().int(),
}

export const FleetPlanTenant = z.object({
  tenantId: z.string(),
  jobId: z.string(),
  appId: z.string(),
  region: z.string(),
  status: z.enum(['planned', 'failed']),
  /** Why the plan failed (null when planned). */
  error: z.string().nullable(),
  /** The tenant's own plan report (`chatferry.reports`, its job). */
  planRunId: z.string().nullable(),
  ...PlanCounts,
  seconds: z.number(),
  quota: z.object({ requestsPerMinute: z.number(), itemsPerRequest: z.number() }),
})
export type FleetPlanTenant = z.infer<typeof FleetPlanTenant>

export const FleetPlanReport = z.object({
  schemaVersion: z.literal(1),
  kind: z.literal('fleet-plan'),
  fleet: z.string(),
  generatedAt: z.string(),
  durationMs: z.number(),
  tenants: z.array(FleetPlanTenant),
  totals: z.object({
    tenants: z.number().int(),
    failed: z.number().int(),
    ...PlanCounts,
    /** The fleet's time at quota: its slowest tenant's (they load in parallel, each at its own quota). */
    seconds: z.number(),
    /** Every tenant's time at quota added up. */
    sumSeconds: z.number(),
  }),
})
export type FleetPlanReport = z.infer<typeof FleetPlanReport>

const zero = () => ({ users: 0, groups: 0, members: 0, messages: 0 })

/** One tenant's row from its plan report. */
export function fleetPlanRow(t: { tenantId: string; jobId: string; region: string }, r: PlanReport): FleetPlanTenant {
  const toCreate = zero()
  const rejectsByReason: Record<string, number> = {}
  let skipped = 0
  let rejected = 0
  for (const e of LEGACY_ENTITIES) {
    const x = r.entities[e]
    toCreate[e] = x.toCreate
    skipped += x.skipped.total
    rejected += x.rejected.total
    for (const [reason, c] of Object.entries(x.rejected.byReason)) {
      rejectsByReason[reason] = (rejectsByReason[reason] ?? 0) + c.count
    }
  }
  return {
    tenantId: t.tenantId,
    jobId: t.jobId,
    appId: r.appId,
    region: t.region,
    status: 'planned',
    error: null,
    planRunId: r.runId,
    toCreate,
    skipped,
    rejected,
    rejectsByReason,
    requests: r.cost.requests,
    seconds: r.cost.seconds,
    quota: { requestsPerMinute: r.cost.quota.requestsPerMinute, itemsPerRequest: r.cost.quota.itemsPerRequest },
  }
}

/** The row of a tenant whose plan failed. */
export function failedPlanRow(
  t: { tenantId: string; jobId: string; appId: string; region: string; quota: FleetPlanTenant['quota'] },
  error: string,
): FleetPlanTenant {
  return { ...t, status: 'failed', error, planRunId: null, toCreate: zero(), skipped: 0, rejected: 0, rejectsByReason: {}, requests: 0, seconds: 0 }
}

/** The fleet report from its rows. */
export function buildFleetPlanReport(fleet: string, rows: readonly FleetPlanTenant[], startedAt: number, now = Date.now()): FleetPlanReport {
  const toCreate = zero()
  const rejectsByReason: Record<string, number> = {}
  for (const row of rows) {
    for (const e of LEGACY_ENTITIES) {
      toCreate[e] += row.toCreate[e]
    }
    for (const [reason, c] of Object.entries(row.rejectsByReason)) {
      rejectsByReason[reason] = (rejectsByReason[reason] ?? 0) + c
    }
  }
  const sum = (pick: (r: FleetPlanTenant) => number) => rows.reduce((a, r) => a + pick(r), 0)
  return FleetPlanReport.parse({
    schemaVersion: 1,
    kind: 'fleet-plan',
    fleet,
    generatedAt: new Date(now).toISOString(),
    durationMs: now - startedAt,
    tenants: rows,
    totals: {
      tenants: rows.length,
      failed: rows.filter((r) => r.status === 'failed').length,
      toCreate,
      skipped: sum((r) => r.skipped),
      rejected: sum((r) => r.rejected),
      rejectsByReason,
      requests: sum((r) => r.requests),
      seconds: Math.max(0, ...rows.map((r) => r.seconds)),
      sumSeconds: sum((r) => r.seconds),
    },
  })
}

const n = (v: number) => v.toLocaleString('en-US')
const created = (r: { toCreate: FleetPlanReport['totals']['toCreate'] }) => LEGACY_ENTITIES.reduce((a, e) => a + r.toCreate[e], 0)

/** The report for a terminal: a row per tenant, the totals, the rejects by reason. */
export function formatFleetPlanReport(r: FleetPlanReport): string {
  const head = ['tenant', 'app', 'status', 'users', 'groups', 'members', 'messages', 'skipped', 'rejected', 'requests', 'at quota']
  const rows = r.tenants.map((t) => [
    t.tenantId,
    t.appId,
    t.status,
    ...LEGACY_ENTITIES.map((e) => n(t.toCreate[e])),
    n(t.skipped),
    n(t.rejected),
    n(t.requests),
    t.status === 'failed' ? '-' : formatDuration(t.seconds),
  ])
  const tot = r.totals
  rows.push([
    'fleet',
    `${tot.tenants} apps`,
    tot.failed > 0 ? `${tot.failed} failed` : 'planned',
    ...LEGACY_ENTITIES.map((e) => n(tot.toCreate[e])),
    n(tot.skipped),
    n(tot.rejected),
    n(tot.requests),
    formatDuration(tot.seconds),
  ])
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)))
  const line = (cells: readonly string[]) => cells.map((c, i) => (i < 3 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ')
  const failures = r.tenants.filter((t) => t.status === 'failed').map((t) => `  ${t.tenantId}: ${t.error ?? ''}`)
  const reasons = Object.entries(tot.rejectsByReason)
    .sort((a, b) => b[1] - a[1])
    .map(([reason, c]) => `  ${n(c)}  ${reason}`)
  return [
    `fleet ${r.fleet}: ${n(created(tot))} items to create in ${tot.tenants} apps, ${n(tot.requests)} requests; ` +
      `${formatDuration(tot.seconds)} at quota with every tenant loading in parallel (${formatDuration(tot.sumSeconds)} one after another)`,
    line(head),
    ...rows.slice(0, -1).map(line),
    line(rows.at(-1) ?? []),
    ...(reasons.length ? ['rejects by reason:', ...reasons] : []),
    ...(failures.length ? ['tenants whose plan failed:', ...failures] : []),
  ].join('\n')
}
