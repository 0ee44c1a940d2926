/**
 * The plan report's conflict preview (`entities.<e>.conflicts`) as rows, for the terminal summary
 * and the HTML report: which update intents `changes.conflicts` would hold back, drop, or apply over
 * a change made on the platform.
 */
import { LEGACY_ENTITIES, type LegacyEntity } from '../model/index.ts'
import type { CONFLICT_OUTCOMES, PlanReport, UpdateCount } from './schema.ts'

/** What each outcome means to the operator, with the policy that gives it. */
export const CONFLICT_OUTCOME_TEXT: Record<(typeof CONFLICT_OUTCOMES)[number], string> = {
  conflict: 'held back, status conflict (changes.conflicts: report)',
  dropped: 'dropped (changes.conflicts: platform-wins)',
  overwrites: 'overwrites a change made on the platform (changes.conflicts: source-wins)',
}

export interface ConflictRow {
  readonly entity: LegacyEntity
  readonly kind: string
  /** {@link CONFLICT_OUTCOME_TEXT} of the outcome. */
  readonly outcome: string
  readonly count: UpdateCount
}

/** Every entity's conflicts, by kind and outcome, in report order. */
export function conflictRows(r: PlanReport): ConflictRow[] {
  return LEGACY_ENTITIES.flatMap((entity) =>
    Object.entries(r.entities[entity].conflicts).flatMap(([kind, byOutcome]) =>
      Object.entries(byOutcome).flatMap(([outcome, count]) =>
        count === undefined ? [] : [{ entity, kind, outcome: CONFLICT_OUTCOME_TEXT[outcome as keyof typeof CONFLICT_OUTCOME_TEXT], count }],
      ),
    ),
  )
}
