/**
 * The policy outcomes a connector reports with its rows (`SourceRow.outcomes`): what a setting of
 * its own, or a fixed rule its README names, changed or left out. Planning counts them with the
 * mappings' outcomes (the plan's "policy outcomes"). Named like those: the setting's or rule's
 * name in camelCase, the outcome in kebab-case (`{policy: 'customFields', outcome: 'dropped'}`).
 */
import type { SourceOutcome, SourceRow } from '../../src/model/connector.ts'

/** `row` with `outcomes` added to any it has (none given: the row itself). */
export function noted<T>(row: SourceRow<T>, outcomes: readonly SourceOutcome[]): SourceRow<T> {
  if (outcomes.length === 0) {
    return row
  }
  return { ...row, outcomes: row.outcomes === undefined ? outcomes : [...row.outcomes, ...outcomes] }
}

/** Collects a record's outcomes while it is decoded; `list` is undefined until one is added. */
export class OutcomeList {
  list: SourceOutcome[] | undefined
  add(policy: string, outcome: string): void {
    ;(this.list ??= []).push({ policy, outcome })
  }
}
