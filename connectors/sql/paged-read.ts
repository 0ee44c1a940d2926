/**
 * The page loop every SQL entity reader shares: keyset pages of at most `pageSize` rows, the next
 * page's query sent while the current one is decoded, and in `finally` the in-flight query awaited,
 * so a consumer's `break` or abort leaves the connection idle and reusable.
 */
import type { Cursor, Page, SourceRow } from '../../src/model/connector.ts'
import type { EpochMs } from '../../src/model/records.ts'
import { cursorOf, type KeyColumn } from './dialect.ts'
import type { SnapshotConnection, SqlResult } from './snapshot-connection.ts'
import { FieldProblem } from './decode.ts'

/** The rows-per-page default of every connector. */
export const DEFAULT_PAGE_SIZE = 1000
/** The largest page a reader accepts. */
export const MAX_PAGE_SIZE = 100_000

/** How one entity is read: its query, its keys and how its raw rows become records. */
export interface PagedReadSpec<T, E = undefined> {
  readonly conn: SnapshotConnection
  /** For error messages: `users`, `messages`… */
  readonly entity: string
  readonly keys: readonly KeyColumn[]
  readonly pageSize: number
  readonly after?: Cursor | undefined
  readonly signal?: AbortSignal | undefined
  /** The SQL of one page: rows strictly after `after`, in key order, at most `limit`. */
  page(after: Cursor | undefined, limit: number): { sql: string; params: unknown[] }
  /** Further lookups one page needs (same snapshot), before the next page is requested. */
  enrich?(rows: readonly Record<string, unknown>[]): Promise<E>
  /** One raw row to a record or a problem; a thrown {@link FieldProblem} becomes a problem. */
  decode(row: Record<string, unknown>, extra: E): T
  /** The legacy id of a raw row, for problems. */
  legacyIdOf(row: Record<string, unknown>): string
}

/** Checks a requested page size. */
export function checkPageSize(pageSize: number): number {
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE_SIZE) {
    throw new TypeError(`Expected pageSize to be an integer 1–${MAX_PAGE_SIZE}, got ${pageSize}`)
  }
  return pageSize
}

/** Decodes one raw row, turning a {@link FieldProblem} into a `RowProblem`. */
export function decodeRow<T, E>(spec: PagedReadSpec<T, E>, row: Record<string, unknown>, extra: E): SourceRow<T> {
  try {
    return { ok: true, record: spec.decode(row, extra) }
  } catch (err) {
    if (!(err instanceof FieldProblem)) throw err
    let legacyId: string
    try {
      legacyId = spec.legacyIdOf(row)
    } catch {
      legacyId = '?'
    }
    return { ok: false, legacyId, field: err.field, reason: err.message }
  }
}

/** Reads pages until the keyset is exhausted. Holds at most two pages (current + prefetched). */
export async function* readPages<T extends { readonly updatedAt?: EpochMs }, E = undefined>(
  spec: PagedReadSpec<T, E>,
): AsyncGenerator<Page<T>, void, undefined> {
  const limit = checkPageSize(spec.pageSize)
  let watermark: EpochMs | undefined
  let pending: Promise<SqlResult> | undefined
  const run = (after: Cursor | undefined): Promise<SqlResult> => {
    const q = spec.page(after, limit)
    const p = spec.conn.query(q.sql, q.params, `reading ${spec.entity}`)
    // Rejections are observed when awaited; this keeps an abandoned prefetch from being "unhandled".
    p.catch(() => {})
    return p
  }
  try {
    spec.signal?.throwIfAborted()
    pending = run(spec.after)
    for (;;) {
      let raw: Record<string, unknown>[] | undefined = (await (pending as Promise<SqlResult>)).rows
      pending = undefined
      if (raw.length === 0) return
      spec.signal?.throwIfAborted()
      const extra = spec.enrich ? await spec.enrich(raw) : (undefined as E)
      const cursor = cursorOf(raw[raw.length - 1] as Record<string, unknown>, spec.keys)
      const more = raw.length === limit
      if (more) pending = run(cursor)
      const rows: SourceRow<T>[] = new Array(raw.length)
      for (let i = 0; i < raw.length; i++) {
        const r = decodeRow(spec, raw[i] as Record<string, unknown>, extra)
        if (r.ok && r.record.updatedAt !== undefined && (watermark === undefined || r.record.updatedAt > watermark)) {
          watermark = r.record.updatedAt
        }
        rows[i] = r
      }
      // The raw rows are garbage from here: not holding them while the consumer works on the page
      // keeps them out of the old generation (they would survive every collection until then).
      raw = undefined
      yield watermark === undefined ? { rows, cursor } : { rows, cursor, watermark }
      if (!more) return
      spec.signal?.throwIfAborted()
    }
  } finally {
    // Leave the connection idle: wait for a prefetched page nobody will read.
    if (pending !== undefined) await pending.catch(() => {})
  }
}
