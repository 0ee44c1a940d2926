/**
 * One entity read from one collection file, in the file's order (mongodump writes natural order;
 * the file never changes, so every read sees the same order): pages of records and problems, a
 * cursor that resumes exactly (the byte offset of the next document, the documents before it, and
 * the file's size to refuse a cursor of another dump), counts and keys that account every document
 * the reads yield. A damaged document (truncated at the end of the file, invalid BSON) is a problem
 * of every entity read from its file, since what it was cannot be told.
 */
import { ChatferryError } from '../../../src/errors.ts'
import type { Cursor, Page, RowProblem, SourceRow } from '../../../src/model/connector.ts'
import type { EpochMs } from '../../../src/model/records.ts'
import { checkPageSize, DEFAULT_PAGE_SIZE } from '../../sql/paged-read.ts'
import { type Doc, FieldProblem } from '../entities/values.ts'
import { type DumpDocument, type DumpPosition, fileSize, readDumpDocuments, START } from './bson-file.ts'

export interface CollectionSpec<T> {
  /** The `.bson` file. */
  readonly file: string
  /** Whether a document is a row of this entity (documents of other kinds are not counted). */
  readonly include: (doc: Doc) => boolean
  /** The record of a row, or a {@link FieldProblem}. */
  readonly decode: (doc: Doc) => T
  /** The legacy id of a row for problems and keys (`?` parts where unreadable). */
  readonly legacyIdOf: (doc: Doc) => string
}

/** `_updatedAt` in ms; `undefined` when absent or not a date (such a row always counts as changed). */
export function changedAt(doc: Doc): EpochMs | undefined {
  const v = doc._updatedAt
  return v instanceof Date && Number.isFinite(v.getTime()) ? v.getTime() : undefined
}

/** Whether a document is a row of the read: damaged ones always, others by the filter and `since`. */
function inRead(spec: CollectionSpec<unknown>, d: DumpDocument, since: EpochMs | undefined): boolean {
  if (d.doc === undefined) {
    return true
  }
  if (!spec.include(d.doc)) {
    return false
  }
  const t = since === undefined ? undefined : changedAt(d.doc)
  return t === undefined || since === undefined || t >= since
}

function rowOf<T>(spec: CollectionSpec<T>, d: DumpDocument): SourceRow<T> {
  if (d.doc === undefined) {
    return { ok: false, legacyId: '?', field: 'bson', reason: d.damage ?? 'unreadable document', instance: `byte ${d.at.offset}` }
  }
  const legacyId = spec.legacyIdOf(d.doc)
  try {
    return { ok: true, record: spec.decode(d.doc) }
  } catch (err) {
    if (!(err instanceof FieldProblem)) {
      throw err
    }
    const problem: RowProblem = { ok: false, legacyId, field: err.field, reason: err.message }
    return legacyId.includes('?') ? { ...problem, instance: `byte ${d.at.offset}` } : problem
  }
}

/** The position a cursor names, checked against the file it was made for. */
async function positionOf(file: string, after: Cursor | undefined): Promise<DumpPosition> {
  if (after === undefined) {
    return START
  }
  const { offset, index, bytes } = after
  const size = await fileSize(file)
  const whole = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0
  if (!whole(offset) || !whole(index) || bytes !== size || offset > size) {
    throw new ChatferryError(
      'SOURCE_INVALID',
      `${file}: the saved read position ${JSON.stringify(after)} does not belong to this file (${size} bytes): the dump was replaced ` +
        'while a read of it was unfinished. Point source.path at the dump that read began with, or start a new job for this dump.',
    )
  }
  return { offset, index }
}

export interface CollectionReadOptions {
  readonly after?: Cursor
  readonly pageSize?: number
  readonly since?: EpochMs
  readonly signal?: AbortSignal
}

/** Pages of the entity's rows from the cursor on; the watermark is the highest `_updatedAt` read. */
export async function* readCollection<T>(spec: CollectionSpec<T>, options: CollectionReadOptions = {}): AsyncGenerator<Page<T>> {
  const pageSize = checkPageSize(options.pageSize ?? DEFAULT_PAGE_SIZE)
  const from = await positionOf(spec.file, options.after)
  const bytes = await fileSize(spec.file)
  let rows: SourceRow<T>[] = []
  let watermark: EpochMs | undefined
  let next = from
  for await (const batch of readDumpDocuments(spec.file, from, options.signal)) {
    for (const d of batch) {
      next = d.next
      if (!inRead(spec, d, options.since)) {
        continue
      }
      rows.push(rowOf(spec, d))
      const t = d.doc === undefined ? undefined : changedAt(d.doc)
      if (t !== undefined && (watermark === undefined || t > watermark)) {
        watermark = t
      }
      if (rows.length >= pageSize) {
        options.signal?.throwIfAborted()
        yield page(rows, next, bytes, watermark)
        rows = []
      }
    }
  }
  if (rows.length > 0) {
    yield page(rows, next, bytes, watermark)
  }
}

function page<T>(rows: SourceRow<T>[], next: DumpPosition, bytes: number, watermark: EpochMs | undefined): Page<T> {
  const cursor = { offset: next.offset, index: next.index, bytes }
  return watermark === undefined ? { rows, cursor } : { rows, cursor, watermark }
}

/** How many rows a read with this `since` yields (one scan of the file). */
export async function countCollection(spec: CollectionSpec<unknown>, since?: EpochMs, signal?: AbortSignal): Promise<number> {
  let n = 0
  for await (const batch of readDumpDocuments(spec.file, START, signal)) {
    for (const d of batch) {
      if (inRead(spec, d, since)) {
        n++
      }
    }
  }
  return n
}

/** The legacy ids of the entity's rows, in pages (damaged documents and unreadable ids left out). */
export async function* collectionKeys(spec: CollectionSpec<unknown>, pageSize = 10_000, signal?: AbortSignal): AsyncGenerator<readonly string[]> {
  let keys: string[] = []
  for await (const batch of readDumpDocuments(spec.file, START, signal)) {
    for (const d of batch) {
      const id = d.doc === undefined || !spec.include(d.doc) ? '?' : spec.legacyIdOf(d.doc)
      if (id.includes('?')) {
        continue
      }
      keys.push(id)
      if (keys.length >= pageSize) {
        yield keys
        keys = []
      }
    }
  }
  if (keys.length > 0) {
    yield keys
  }
}
