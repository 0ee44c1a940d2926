/** The plan report's retention edge: messages that age out before the load at the quota reaches them. */
import type { LegacyEntity } from '../model/index.ts'
import type { DryRunResult } from '../plan/dry-run.ts'
import { retentionEdge, retentionEdgeAdvice } from '../plan/retention-edge.ts'
import type { ReportConfig } from './report-context.ts'
import type { EntityPlan, PlanReport } from './schema.ts'

type EdgeReport = NonNullable<PlanReport['retention']['edge']>

/** What the edge reads of the plan report's input (`plan-report.ts`'s `PlanReportInput`). */
export interface RetentionEdgeInput {
  readonly config: Pick<ReportConfig, 'target' | 'policies'>
  readonly result: Pick<DryRunResult, 'entities'>
  /** The moment the estimate starts from (epoch ms). */
  readonly now: number
}

/** Estimated from the items to create ahead of the messages and the messages to create, at the quota, starting now. */
export function retentionEdgeReport(input: RetentionEdgeInput, entities: Record<LegacyEntity, EntityPlan>): EdgeReport {
  const { retention } = input.config.policies
  const { quota } = input.config.target
  const edge = retentionEdge({
    startMs: input.now,
    itemsAhead: entities.users.toCreate + entities.groups.toCreate + entities.members.toCreate,
    messages: input.result.entities.messages.toSendMinutes,
    retentionDays: retention.retentionDays,
    requestsPerMinute: quota.requestsPerMinute,
    itemsPerRequest: quota.itemsPerRequest,
  })
  const checked = retention.oldMessages === 'skip'
  const agingOut = checked ? edge.agingOut : 0
  return {
    checked,
    messages: edge.messages,
    agingOut,
    oldestAgingOut: checked ? edge.oldestAgingOut : null,
    newestAgingOut: checked ? edge.newestAgingOut : null,
    firstMessageSeconds: edge.firstMessageSeconds,
    lastMessageSeconds: edge.lastMessageSeconds,
    advice: checked ? retentionEdgeAdvice(edge, retention.retentionDays) : '',
  }
}
