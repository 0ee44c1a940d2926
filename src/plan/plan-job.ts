/**
 * Extract → map → validate → plan: reads every entity of a legacy source in one snapshot, maps
 * each record with the configured policies, and hands the outcome of every record (mapped items,
 * skips with their policy, rejects with their field and reason) to a {@link PlanSink}, page by
 * page.
 *
 * Two sinks share this one loop:
 * - the ledger sink ({@link createLedgerSink}, the default): writes every page into the ledger with
 *   the entity's cursor in the same transaction, so a crash loses at most the page in hand and the
 *   next run resumes from the cursor (`chatferry run`);
 * - the comparing sink of the dry run (`dry-run.ts`, `chatferry plan`): writes no item state, id
 *   decision or cursor, and classifies each mapped item against the ledger instead.
 *
 * The loop's parts: `plan-types.ts` (the sink, the options and the run's state, as types),
 * `plan-run.ts` (the run's start), `plan-entity.ts` (one entity, page by page,
 * from `read-window.ts`; `page-pipeline.ts` maps a page while the one before is written),
 * `map-page.ts` (rows → items, skips, rejects, counted in
 * `plan-summary.ts`), `known-records.ts` (what mappings look up), `extras-tally.ts`
 * (placeholders), `ledger-sink.ts` (the default sink).
 */
import type { OutcomeCounts } from '../../mappings/index.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { PlaceholderInfo } from './extras-tally.ts'
import type { FilesInventorySummary } from './files-inventory.ts'
import { planEntity } from './plan-entity.ts'
import { startPlanRun } from './plan-run.ts'
import type { EntityPlanSummary } from './plan-summary.ts'
import type { MonthCount, PlanJobOptions } from './plan-types.ts'

export { type PlaceholderInfo, PLACEHOLDERS_TRACKED } from './extras-tally.ts'
export { createLedgerSink } from './ledger-sink.ts'
export { DEFAULT_PAGE_SIZE } from './plan-run.ts'
export { type EntityPlanSummary, note, type ReasonCount, SAMPLES_PER_REASON } from './plan-summary.ts'
export type { MonthCount, PlanJobOptions, PlanJobSettings, PlanSink, SinkPage } from './plan-types.ts'

export interface PlanJobSummary {
  readonly snapshotAt: number
  readonly entities: Record<LegacyEntity, EntityPlanSummary>
  readonly outcomes: OutcomeCounts
  /** Messages per month `YYYY-MM` (UTC). */
  readonly months: Record<string, MonthCount>
  /** The start of the retention window (epoch ms) the run judged against. */
  readonly retentionStart: number
  /** Placeholder users by uid (at most {@link PLACEHOLDERS_TRACKED}), and the messages they own. */
  readonly placeholders: Record<string, PlaceholderInfo>
  /** Messages owned by placeholders beyond the tracked ones. */
  readonly placeholderOthers: { placeholders: number; messages: number }
  /** The distinct files of the messages read (`files.mode` rehost or reference): `files-inventory.ts`. */
  readonly files?: FilesInventorySummary
}

/** Plans every entity of the source in order (users, groups, members, messages) into the sink. */
export async function planJob(options: PlanJobOptions): Promise<PlanJobSummary> {
  const run = await startPlanRun(options)
  for (const entity of LEGACY_ENTITIES) {
    await planEntity(run, entity)
  }
  if (run.deltasSinceReconciliation !== undefined) {
    await run.sink.recordDeltasSinceReconciliation?.(run.reconcileKeys ? 0 : run.deltasSinceReconciliation + 1)
  }
  const { entities, outcomes, months, retentionStart, extras } = run
  return {
    ...(run.files !== undefined ? { files: run.files.summary() } : {}),
    snapshotAt: options.session.snapshotAt,
    entities,
    outcomes,
    months,
    retentionStart,
    placeholders: extras.placeholders,
    placeholderOthers: extras.placeholderOthers,
  }
}
