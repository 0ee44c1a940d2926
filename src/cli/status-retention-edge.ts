/**
 * `status`'s retention-edge warning: of the messages still to send, how many will be older than the
 * retention window when the load, at the app's quota from now, reaches them (behind the users,
 * groups and members still to send). The arithmetic is the plan's (`src/plan/retention-edge.ts`).
 */
import type { ResolvedConfig } from '../job/config.ts'
import type { EntityReport } from '../load/progress.ts'
import { type RetentionEdge, retentionEdge, retentionEdgeAdvice } from '../plan/retention-edge.ts'

export interface StatusRetentionEdge extends RetentionEdge {
  /** False when `retention.oldMessages: send` (extended retention: nothing ages out). */
  readonly checked: boolean
  readonly advice: string
}

export function statusRetentionEdge(
  openMessagesPerMinute: [number, number][],
  config: Pick<ResolvedConfig, 'target' | 'policies'>,
  report: readonly EntityReport[],
  now: number,
): StatusRetentionEdge {
  const { retention } = config.policies
  const ahead = report.filter((r) => r.entity !== 'messages').reduce((a, r) => a + r.remaining, 0)
  const edge = retentionEdge({
    startMs: now,
    itemsAhead: ahead,
    messages: openMessagesPerMinute,
    retentionDays: retention.retentionDays,
    requestsPerMinute: config.target.quota.requestsPerMinute,
    itemsPerRequest: config.target.quota.itemsPerRequest,
  })
  const checked = retention.oldMessages === 'skip'
  return checked ? { ...edge, checked, advice: retentionEdgeAdvice(edge, retention.retentionDays) } : { ...edge, agingOut: 0, checked, advice: '' }
}
