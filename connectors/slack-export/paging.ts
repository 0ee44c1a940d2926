/**
 * Rows of one entity, each with its position in the export, gathered into pages. A position is the
 * cursor: passing a page's cursor back as `after` reads on from the row after its last one.
 */
import type { Cursor, Page, RowProblem, SourceRow } from '../../src/model/connector.ts'
import { FieldProblem } from './entities/fields.ts'

export interface PositionedRow<T> {
  readonly pos: Cursor
  readonly row: SourceRow<T>
  /** The record's change time, for the watermark. */
  readonly changedAt?: number
}

/** Pages of `pageSize` rows from batches of positioned rows (a batch may be any size). */
export async function* pagesOf<T>(
  batches: AsyncIterable<readonly PositionedRow<T>[]>,
  pageSize: number,
  signal?: AbortSignal,
): AsyncGenerator<Page<T>> {
  let page: SourceRow<T>[] = []
  let cursor: Cursor | undefined
  let watermark: number | undefined
  signal?.throwIfAborted()
  for await (const batch of batches) {
    for (const r of batch) {
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
  }
  if (page.length > 0 && cursor !== undefined) {
    yield { rows: page, cursor, ...(watermark !== undefined ? { watermark } : {}) }
  }
}

/** One row at a time as batches of one. */
export async function* single<T>(rows: AsyncIterable<PositionedRow<T>>): AsyncGenerator<PositionedRow<T>[]> {
  for await (const r of rows) {
    yield [r]
  }
}

/** A problem row from a decode failure (a {@link FieldProblem}) or a bad element. */
export function problem(legacyId: string, field: string, reason: string, instance?: string): RowProblem {
  return { ok: false, legacyId, field, reason, ...(instance !== undefined ? { instance } : {}) }
}

/** Runs `decode`; a FieldProblem becomes a problem row for `legacyId`, anything else is thrown. */
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

/** A number from a cursor (`-1` when absent). */
export const at = (c: Cursor | undefined, key: string): number => (typeof c?.[key] === 'number' ? c[key] : -1)
