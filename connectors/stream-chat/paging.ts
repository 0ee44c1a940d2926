/**
 * Rows of one entity, each with its position (the cursor a read resumes after: the export's
 * ordinal `{n}`, or an API read's page and offset), gathered into pages.
 */
import type { Cursor, Page, RowProblem, SourceRow } from '../../src/model/connector.ts'
import { pagesOf as pagesOfBatches, single } from '../slack-export/paging.ts'
import { FieldProblem } from './entities/fields.ts'

export interface NumberedRow<T> {
  /** Passing it as `after` reads the rows after this one. */
  readonly pos: Cursor
  readonly row: SourceRow<T>
  /** The record's change time, for the watermark and delta reads. */
  readonly changedAt?: number
}

/** The ordinal a cursor stands at (-1: from the start). */
export const cursorOrdinal = (after: Cursor | undefined): number => (typeof after?.n === 'number' ? after.n : -1)

/** The rows gathered into pages: slack-export's page loop (the watermark, the cursor, the abort checks), a row at a time. */
export function pagesOf<T>(rows: AsyncIterable<NumberedRow<T>>, pageSize: number, signal?: AbortSignal): AsyncGenerator<Page<T>> {
  return pagesOfBatches(single(rows), pageSize, signal)
}

export function problem(legacyId: string, field: string, reason: string, instance?: string): RowProblem {
  return { ok: false, legacyId, field, reason, ...(instance !== undefined ? { instance } : {}) }
}

/** Runs `decode`; a FieldProblem becomes a problem row for `legacyId`, anything else is thrown. */
export function decodeRow<T>(legacyId: string, decode: () => T, instance?: string): SourceRow<T> {
  try {
    return { ok: true, record: decode() }
  } catch (err) {
    if (err instanceof FieldProblem) {
      return problem(legacyId, err.field, err.message, instance)
    }
    throw err
  }
}
