/**
 * The page loop of the file and API connectors: rows of one entity, each with its position in the
 * source (the cursor), gathered into pages with the watermark and abort checks. A position is the
 * cursor: passing a page's cursor back as `after` reads on from the row after its last one.
 */
import type { Cursor, Page, SourceRow } from '../../src/model/connector.ts'
import { type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../src/model/records.ts'

export interface PositionedRow<T> {
  /** Passing it as `after` reads the rows after this one. */
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

/**
 * The legacy ids of an entity's good rows in pages of `size`, from a full read (a source without a
 * key index). With `signal`, an abort is checked after each page is taken.
 */
export async function* keyPagesOf(
  entity: LegacyEntity,
  batches: AsyncIterable<readonly PositionedRow<LegacyRecordOf[LegacyEntity]>[]>,
  size: number,
  signal?: AbortSignal,
): AsyncGenerator<readonly string[]> {
  let keys: string[] = []
  for await (const batch of batches) {
    for (const { row } of batch) {
      if (row.ok) {
        keys.push(legacyIdOf(entity, row.record))
        if (keys.length >= size) {
          yield keys
          signal?.throwIfAborted()
          keys = []
        }
      }
    }
  }
  if (keys.length > 0) {
    yield keys
  }
}

/** A number from a cursor (`-1` when absent). */
export const at = (c: Cursor | undefined, key: string): number => (typeof c?.[key] === 'number' ? c[key] : -1)
