/**
 * Policy outcomes, counted once for both kinds: what a mapping policy did to a record
 * (`MapResult.outcomes`) and what a connector reports it chose while reading a row
 * ({@link SourceOutcome}: a source setting or a fixed rule of its README). Each goes into the run's
 * `policy → outcome → count` and the entity's `policy: outcome` with sample legacy ids, so the plan
 * summary, its JSON and the HTML plan report show them alike.
 */
import type { OutcomeCounts } from '../../mappings/index.ts'
import type { SourceOutcome } from '../model/connector.ts'
import { note, type ReasonCount } from './plan-summary.ts'

/** Counts `outcomes` (`undefined`: none) of the row `legacyId`. */
export function countOutcomes(
  outcomes: readonly SourceOutcome[] | undefined,
  legacyId: string,
  run: OutcomeCounts,
  entity: Record<string, ReasonCount>,
): void {
  for (const o of outcomes ?? NONE) {
    const byOutcome = (run[o.policy] ??= {})
    byOutcome[o.outcome] = (byOutcome[o.outcome] ?? 0) + 1
    note(entity, `${o.policy}: ${o.outcome}`, legacyId)
  }
}

const NONE: readonly SourceOutcome[] = []
