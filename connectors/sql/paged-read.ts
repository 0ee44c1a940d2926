/**
 * The page loop every SQL entity reader shares, which accounts for every row of the query:
 * 1. the keyset pass: rows whose key columns are all non-NULL, in key order, pages of `pageSize`
 *    rows (fewer where a key group would straddle two pages, more where one key has more rows than
 *    a page), the next page's query sent while the current one is decoded. A page never
 *    ends inside a group of rows sharing one key (the next page starts strictly after the key), and
 *    the second and later rows of such a group become duplicate-key problems naming the first,
 *    and the first goes through the spec's `screen` (a legacy id repeated under another key);
 * 2. the NULL-key pass: rows with a NULL in a key column cannot be ordered or resumed by key, so
 *    they are read afterwards, `pageSize` at a time, each one a problem naming the column.
 * The cursor says where the read stands: key values during the keyset pass, `{'#nullKeys': n}`
 * (rows of the NULL-key pass done) after it. In `finally` the in-flight query is awaited, so a
 * consumer's `break` or abort leaves the connection idle and reusable.
 */
import type { Cursor, Page, RowProblem, SourceRow } from '../../src/model/connector.ts'
import type { EpochMs } from '../../src/model/records.ts'
import { FieldProblem } from './decode.ts'
import { buildKeyEqualsQuery, buildKeysetQuery, buildNullKeyQuery, cursorOf, type KeyColumn, type KeysetQuery, sameKey } from './dialect.ts'
import type { SnapshotConnection, SqlResult } from './snapshot-connection.ts'

/** The rows-per-page default of every connector. */
export const DEFAULT_PAGE_SIZE = 1000
/** The largest page a reader accepts, and the most rows one key may share. */
export const MAX_PAGE_SIZE = 100_000
/** The cursor field of the NULL-key pass: how many of its rows are done. */
export const NULL_KEYS_DONE = '#nullKeys'

/** How one entity is read: its query, its keys and how its raw rows become records. */
export interface PagedReadSpec<T, E = undefined> {
  readonly conn: SnapshotConnection
  /** For error messages: `users`, `messages`… */
  readonly entity: string
  readonly keys: readonly KeyColumn[]
  readonly pageSize: number
  readonly after?: Cursor | undefined
  readonly signal?: AbortSignal | undefined
  /** The rows to read (select list, FROM, fixed conditions); the paging is added here. */
  readonly query: Pick<KeysetQuery, 'select' | 'from' | 'where'>
  /** Further lookups one page needs (same snapshot), before the next page is requested. */
  enrich?(rows: readonly Record<string, unknown>[]): Promise<E>
  /** One raw row to a record or a problem; a thrown {@link FieldProblem} becomes a problem. */
  decode(row: Record<string, unknown>, extra: E): T
  /** The legacy id of a raw row, for problems. */
  legacyIdOf(row: Record<string, unknown>): string
  /**
   * A keyed row that is no record for a reason beyond its own values (another row holds its legacy
   * id: `duplicate-ids.ts`), as a problem; `undefined` reads it as usual.
   */
  screen?(row: Record<string, unknown>): RowProblem | undefined
}

type Row = Record<string, unknown>

/** Checks a requested page size. */
export function checkPageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new TypeError(`Expected pageSize to be an integer 1–${MAX_PAGE_SIZE}, got ${pageSize}`)
  }
  return pageSize
}

function legacyIdOrUnknown<T, E>(spec: PagedReadSpec<T, E>, row: Row): string {
  try {
    return spec.legacyIdOf(row)
  } catch {
    return '?'
  }
}

/** Decodes one raw row, turning a {@link FieldProblem} into a `RowProblem`. */
export function decodeRow<T, E>(spec: PagedReadSpec<T, E>, row: Row, extra: E): SourceRow<T> {
  try {
    return { ok: true, record: spec.decode(row, extra) }
  } catch (err) {
    if (!(err instanceof FieldProblem)) {
      throw err
    }
    return { ok: false, legacyId: legacyIdOrUnknown(spec, row), field: err.field, reason: err.message }
  }
}

/** The problem of the `n`-th extra row (n ≥ 2) sharing the key of `first`. */
export function duplicateKeyProblem<T, E>(spec: PagedReadSpec<T, E>, first: Row, row: Row, n: number): RowProblem {
  const names = spec.keys.map((k) => k.name).join(', ')
  const key = JSON.stringify(Object.values(cursorOf(row, spec.keys)))
  const firstId = legacyIdOrUnknown(spec, first)
  const legacyId = legacyIdOrUnknown(spec, row)
  return {
    ok: false,
    legacyId,
    field: names,
    reason: `duplicate key (${names}) = ${key}: legacy rows ${firstId} and ${legacyId} share it; the first read (${firstId}) is kept, this one is not imported`,
    instance: `duplicate-${n}`,
  }
}

/** The problem of a row with a NULL key column; `ordinal` (1-based, in the NULL-key pass) tells unnamed rows apart. */
export function nullKeyProblem<T, E>(spec: PagedReadSpec<T, E>, row: Row, ordinal: number): RowProblem {
  const column = spec.keys.find((k) => row[k.name] === null || row[k.name] === undefined) ?? (spec.keys[0] as KeyColumn)
  const legacyId = legacyIdOrUnknown(spec, row)
  return {
    ok: false,
    legacyId,
    field: column.name,
    reason: `key column ${column.name} is NULL: the row cannot be ordered or resumed`,
    ...(legacyId.includes('?') ? { instance: `null-key-${ordinal}` } : {}),
  }
}

interface ReadState {
  watermark: EpochMs | undefined
}

/** Reads both passes until every row is read. Holds at most two pages (current + prefetched). */
export async function* readPages<T extends { readonly updatedAt?: EpochMs }, E = undefined>(
  spec: PagedReadSpec<T, E>,
): AsyncGenerator<Page<T>, void, undefined> {
  const limit = checkPageSize(spec.pageSize)
  const state: ReadState = { watermark: undefined }
  const done = spec.after?.[NULL_KEYS_DONE]
  if (done === undefined) {
    yield* keyedPages(spec, limit, state)
  }
  yield* nullKeyPages(spec, limit, typeof done === 'number' ? done : 0, state)
}

function pageOf<T>(rows: SourceRow<T>[], cursor: Cursor, state: ReadState): Page<T> {
  return state.watermark === undefined ? { rows, cursor } : { rows, cursor, watermark: state.watermark }
}

async function* keyedPages<T extends { readonly updatedAt?: EpochMs }, E>(
  spec: PagedReadSpec<T, E>,
  limit: number,
  state: ReadState,
): AsyncGenerator<Page<T>, void, undefined> {
  let pending: Promise<SqlResult> | undefined
  // One row beyond the page shows whether the page ends inside a key group.
  const run = (after: Cursor | undefined): Promise<SqlResult> => {
    const q = buildKeysetQuery(spec.conn.dialect, { ...spec.query, keys: spec.keys, after, limit: limit + 1 })
    const p = spec.conn.query(q.sql, q.params, `reading ${spec.entity}`)
    // Rejections are observed when awaited; this keeps an abandoned prefetch from being "unhandled".
    p.catch(() => {})
    return p
  }
  try {
    spec.signal?.throwIfAborted()
    pending = run(spec.after)
    for (;;) {
      let raw: Row[] | undefined = (await (pending as Promise<SqlResult>)).rows
      pending = undefined
      if (raw.length === 0) {
        return
      }
      spec.signal?.throwIfAborted()
      const more = raw.length > limit
      if (more) {
        raw = await pageOfWholeGroups(spec, raw, limit)
      }
      const extra = spec.enrich ? await spec.enrich(raw) : (undefined as E)
      const cursor = cursorOf(raw[raw.length - 1] as Row, spec.keys)
      if (more) {
        pending = run(cursor)
      }
      const rows = decodePage(spec, raw, extra, state)
      // The raw rows are garbage from here: not holding them while the consumer works on the page
      // keeps them out of the old generation (they would survive every collection until then).
      raw = undefined
      yield pageOf(rows, cursor, state)
      if (!more) {
        return
      }
      spec.signal?.throwIfAborted()
    }
  } finally {
    // Leave the connection idle: wait for a prefetched page nobody will read.
    if (pending !== undefined) {
      await pending.catch(() => {})
    }
  }
}

/**
 * The page of `limit` rows out of `limit + 1`, so that it does not end inside a group of rows
 * sharing one key (the next page starts strictly after the page's last key): when the extra row
 * continues the last key, the group is cut off (the next page reads it whole) or, when it fills
 * the whole page, read whole by its key.
 */
async function pageOfWholeGroups<T, E>(spec: PagedReadSpec<T, E>, raw: Row[], limit: number): Promise<Row[]> {
  const last = raw[limit - 1] as Row
  if (!sameKey(last, raw[limit] as Row, spec.keys)) {
    return raw.slice(0, limit)
  }
  let start = limit - 1
  while (start > 0 && sameKey(raw[start - 1] as Row, last, spec.keys)) {
    start--
  }
  if (start > 0) {
    return raw.slice(0, start)
  }
  const key = cursorOf(last, spec.keys)
  const q = buildKeyEqualsQuery(spec.conn.dialect, { ...spec.query, keys: spec.keys, limit: MAX_PAGE_SIZE + 1 }, key)
  const group = (await spec.conn.query(q.sql, q.params, `reading ${spec.entity}`)).rows
  if (group.length > MAX_PAGE_SIZE) {
    const names = spec.keys.map((k) => k.name).join(', ')
    throw new Error(
      `${spec.entity}: more than ${MAX_PAGE_SIZE} rows share the key (${names}) = ${JSON.stringify(Object.values(key))}; choose key columns that are unique together`,
    )
  }
  return group
}

/**
 * Decodes a page; the second and later rows of a key group become duplicate-key problems, and a
 * group's first row the screen refuses becomes its problem.
 */
function decodePage<T extends { readonly updatedAt?: EpochMs }, E>(
  spec: PagedReadSpec<T, E>,
  raw: readonly Row[],
  extra: E,
  state: ReadState,
): SourceRow<T>[] {
  const rows: SourceRow<T>[] = new Array(raw.length)
  let first: Row | undefined
  let twins = 1
  for (let i = 0; i < raw.length; i++) {
    const row = raw[i] as Row
    if (first !== undefined && sameKey(first, row, spec.keys)) {
      rows[i] = duplicateKeyProblem(spec, first, row, ++twins)
      continue
    }
    first = row
    twins = 1
    const screened = spec.screen?.(row)
    if (screened !== undefined) {
      rows[i] = screened
      continue
    }
    const r = decodeRow(spec, row, extra)
    if (r.ok && r.record.updatedAt !== undefined && (state.watermark === undefined || r.record.updatedAt > state.watermark)) {
      state.watermark = r.record.updatedAt
    }
    rows[i] = r
  }
  return rows
}

async function* nullKeyPages<T, E>(
  spec: PagedReadSpec<T, E>,
  limit: number,
  offset: number,
  state: ReadState,
): AsyncGenerator<Page<T>, void, undefined> {
  for (;;) {
    spec.signal?.throwIfAborted()
    const q = buildNullKeyQuery(spec.conn.dialect, { ...spec.query, keys: spec.keys, limit, offset })
    const raw = (await spec.conn.query(q.sql, q.params, `reading ${spec.entity} rows with a NULL key`)).rows
    if (raw.length === 0) {
      return
    }
    const rows: SourceRow<T>[] = raw.map((row, i) => nullKeyProblem(spec, row, offset + i + 1))
    offset += raw.length
    yield pageOf(rows, { [NULL_KEYS_DONE]: offset }, state)
    if (raw.length < limit) {
      return
    }
  }
}
