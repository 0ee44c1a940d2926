/** Rows with the cursor a read resumes after, gathered into pages; decode failures as problems. */
import type { Cursor, Page, RowProblem, SourceRow } from '../../src/model/connector.ts'
import { pagesOf as pagesOfBatches, single } from '../slack-export/paging.ts'
import { FieldProblem } from './entities/fields.ts'

export interface PositionedRow<T> {
  readonly pos: Cursor
  readonly row: SourceRow<T>
  readonly changedAt?: number
}

/** The rows gathered into pages: slack-export's page loop (the watermark, the cursor, the abort checks), a row at a time. */
export function pagesOf<T>(rows: AsyncIterable<PositionedRow<T>>, pageSize: number, signal?: AbortSignal): AsyncGenerator<Page<T>> {
  return pagesOfBatches(single(rows), pageSize, signal)
}

export const problem = (legacyId: string, field: string, reason: string): RowProblem => ({ ok: false, legacyId, field, reason })

export function decodeRow<T>(legacyId: string, decode: () => T): SourceRow<T> {
  try {
    return { ok: true, record: decode() }
  } catch (err) {
    if (err instanceof FieldProblem) {
      return problem(legacyId, err.field, err.message)
    }
    throw err
  }
}
