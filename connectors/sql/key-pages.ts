/**
 * The keys-only read every SQL connector shares (`SourceSession.readKeys`): the legacy ids of an
 * entity's rows, keyset-paged in key order inside the session's snapshot, selecting only the key
 * and id columns (no record is built). Rows with a NULL key are left out: they are problems, never
 * loaded items. A page never drops rows that share its last key with the next page: that key's
 * rows are read whole.
 */
import type { Cursor } from '../../src/model/connector.ts'
import { buildKeyEqualsQuery, buildKeysetQuery, cursorOf, type KeyColumn, type KeysetQuery, sameKey } from './dialect.ts'
import { MAX_PAGE_SIZE } from './paged-read.ts'
import type { SnapshotConnection } from './snapshot-connection.ts'

/** Keys per page when the caller names none. */
export const DEFAULT_KEYS_PAGE = 10_000

export interface KeyReadSpec {
  readonly conn: SnapshotConnection
  /** For error messages: `users`, `messages`… */
  readonly entity: string
  readonly keys: readonly KeyColumn[]
  /** The rows (FROM and fixed conditions); the select list is the key and id columns. */
  readonly query: Pick<KeysetQuery, 'from' | 'where'>
  /** Columns `legacyIdOf` reads besides the keys, as `expr AS name` pairs. */
  readonly idColumns: readonly KeyColumn[]
  readonly pageSize?: number | undefined
  readonly signal?: AbortSignal | undefined
  legacyIdOf(row: Record<string, unknown>): string
}

/** Pages of legacy ids, in key order. */
export async function* readKeyPages(spec: KeyReadSpec): AsyncGenerator<string[], void, undefined> {
  const limit = Math.min(Math.max(1, spec.pageSize ?? DEFAULT_KEYS_PAGE), MAX_PAGE_SIZE)
  const { dialect } = spec.conn
  const columns = new Map<string, KeyColumn>()
  for (const c of [...spec.keys, ...spec.idColumns]) {
    columns.set(c.name, c)
  }
  const select = [...columns.values()].map((c) => `${c.expr} AS ${dialect.quote(c.name)}`).join(', ')
  const base = { ...spec.query, select, keys: spec.keys }
  let after: Cursor | undefined
  for (;;) {
    spec.signal?.throwIfAborted()
    const q = buildKeysetQuery(dialect, { ...base, after, limit: limit + 1 })
    const raw = (await spec.conn.query(q.sql, q.params, `reading the ${spec.entity} keys`)).rows
    if (raw.length === 0) {
      return
    }
    const more = raw.length > limit
    const page = more ? raw.slice(0, limit) : raw
    const last = page[page.length - 1] as Record<string, unknown>
    const ids = page.map((row) => spec.legacyIdOf(row))
    if (more && sameKey(last, raw[limit] as Record<string, unknown>, spec.keys)) {
      // Rows sharing the last key go on past the page: the next page starts after that key.
      const g = buildKeyEqualsQuery(dialect, { ...base, limit: MAX_PAGE_SIZE + 1 }, cursorOf(last, spec.keys))
      ids.push(...(await spec.conn.query(g.sql, g.params, `reading the ${spec.entity} keys`)).rows.map((row) => spec.legacyIdOf(row)))
    }
    yield ids
    if (!more) {
      return
    }
    after = cursorOf(last, spec.keys)
  }
}
