/** Rows with the cursor a read resumes after, gathered into pages; decode failures as problems. */
import type { Cursor, Page, RowProblem, SourceRow } from '../../src/model/connector.ts'
import { FieldProblem } from './entities/fields.ts'

export interface PositionedRow<T> {
  readonly pos: Cursor
  readonly row: SourceRow<T>
  readonly changedAt?: number
}

export async function* pagesOf<T>(rows: AsyncIterable<PositionedRow<T>>, pageSize: number, signal?: AbortSignal): AsyncGenerator<Page<T>> {
  let page: SourceRow<T>[] = []
  let cursor: Cursor | undefined
  let watermark: number | undefined
  signal?.throwIfAborted()
  for await (const r of rows) {
    page.push(r.row)
    cursor = r.pos
    if (r.changedAt !== undefined && (watermark === undefined || r.changedAt > watermark)) {
      watermark = r.changedAt
    }
    if (page.length >= pageSize) {
      yield { rows: page, cursor, ...(watermark !== undefined ? { watermark } : {}) }
      signal?.throwIfAborted()
      page = []
    }
  }
  if (page.length > 0 && cursor !== undefined) {
    yield { rows: page, cursor, ...(watermark !== undefined ? { watermark } : {}) }
  }
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
