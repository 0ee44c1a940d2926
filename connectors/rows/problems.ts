/**
 * The one problem type every connector shares: a decoder throws {@link FieldProblem} naming the
 * field it cannot read, and the reader turns it into a `RowProblem` (the row is quarantined, the
 * read goes on). `problem` and `decodeRow` build those rows for the file and API connectors; the
 * SQL page loop (`../sql/paged-read.ts`) catches the same class.
 */
import type { RowProblem, SourceRow } from '../../src/model/connector.ts'
import { OutcomeList } from './outcomes.ts'

/** A value that cannot become its canonical field: becomes a RowProblem naming the field. */
export class FieldProblem extends Error {
  readonly field: string
  constructor(field: string, reason: string) {
    super(reason)
    this.name = 'FieldProblem'
    this.field = field
  }
}

/** A problem row; `instance` tells apart problems of one legacy id (a file position, an ordinal). */
export function problem(legacyId: string, field: string, reason: string, instance?: string): RowProblem {
  return { ok: false, legacyId, field, reason, ...(instance !== undefined ? { instance } : {}) }
}

/**
 * Runs `decode`: its record with the policy outcomes it noted in `out`; a {@link FieldProblem}
 * becomes a problem row for `legacyId`, anything else is thrown.
 */
export function decodeRow<T>(legacyId: string, decode: (out: OutcomeList) => T, instance?: string): SourceRow<T> {
  const out = new OutcomeList()
  try {
    const record = decode(out)
    return out.list === undefined ? { ok: true, record } : { ok: true, record, outcomes: out.list }
  } catch (err) {
    if (err instanceof FieldProblem) {
      return problem(legacyId, err.field, err.message, instance)
    }
    throw err
  }
}
