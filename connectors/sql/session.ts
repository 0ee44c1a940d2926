/**
 * The session every SQL connector shares, driven by its per-entity table ({@link SqlEntityTable}):
 * for each entity the keyset query (select list, FROM, conditions, key columns), the delta
 * condition, the decoder and the legacy id of a raw row. The session opens the read-only snapshot
 * (`snapshot-connection.ts`), counts with the same FROM and conditions, pages each entity with the
 * shared page loop (`paged-read.ts`: duplicate and NULL keys as problems, the cursor, the
 * watermark), lists its keys (`key-pages.ts`) and closes the snapshot. A connector declares its
 * table, and what it alone has (a team or realm check when opening, its group activity).
 */
import type { GroupActivity, KeysOptions, Page, ReadOptions, RowProblem, SourceSession } from '../../src/model/connector.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { buildCountQuery, type KeyColumn, type Params } from './dialect.ts'
import { readKeyPages } from './key-pages.ts'
import { NULL_KEYS_DONE, type PagedReadSpec, readPages } from './paged-read.ts'
import { openSnapshotConnection, type SnapshotConnection } from './snapshot-connection.ts'

type Row = Record<string, unknown>

/** One raw row to a record; a thrown `FieldProblem` makes the row a problem. */
export type RowDecoder<T> = (row: Row) => T

/** The rows an entity reads: FROM, fixed conditions and the key columns the keyset orders by. */
export interface SqlRows {
  readonly from: string
  readonly where?: readonly string[]
  readonly keys: readonly KeyColumn[]
}

/** One entity of a SQL connector: how it is read, counted, decoded and keyed. */
export interface SqlEntity<T> {
  readonly query: SqlRows & { readonly select: string }
  /**
   * Delta mode's condition: rows changed at or after `since`. Without one the entity has no change
   * time: a delta reads it whole and `countChangedSince` answers undefined.
   */
  readonly changedSince?: (params: Params, since: EpochMs) => string
  /** The rows `readKeys` lists, when they are not the query's own (default: `query`). */
  readonly keysQuery?: SqlRows
  /** Columns `legacyIdOf` reads besides the keys, as `expr AS name`, for `readKeys`. */
  readonly idColumns?: readonly KeyColumn[]
  /** The connection the entity reads through (default: the session's). */
  readonly conn?: SnapshotConnection
  /** The legacy id of a raw row (for problems and `readKeys`). */
  legacyIdOf(row: Row): string
  /**
   * How raw rows become records: row by row, or per page after lookups the page needs in the same
   * snapshot (mentioned names, reactions), made before the next page is requested.
   */
  readonly decode: RowDecoder<T> | { readonly perPage: (rows: readonly Row[]) => Promise<RowDecoder<T>> }
  /**
   * A read's screen, built before its first page: a keyed row that is no record for a reason beyond
   * its own values (another row holds its legacy id), as a problem. A read resumed past the keyset
   * pass is not screened.
   */
  screen?(): Promise<(row: Row) => RowProblem | undefined>
}

/** A connector's entities; an entity it does not read is absent (counts 0, reads nothing, no keys). */
export type SqlEntityTable = { readonly [E in LegacyEntity]?: SqlEntity<LegacyRecordOf[E]> }

/** What a connector gives the session once the snapshot is open. */
export interface SqlSessionPlan {
  readonly table: SqlEntityTable
  /** The connector's first join or message per group, when its groups may carry no creation time. */
  readonly groupActivity?: (options: { readonly signal?: AbortSignal }) => Promise<ReadonlyMap<string, GroupActivity>>
}

export class SqlSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly groupActivity?: (options?: { readonly signal?: AbortSignal }) => Promise<ReadonlyMap<string, GroupActivity>>
  readonly #conn: SnapshotConnection
  readonly #table: SqlEntityTable
  readonly #pageSize: number

  constructor(conn: SnapshotConnection, plan: SqlSessionPlan, pageSize: number) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#table = plan.table
    this.#pageSize = pageSize
    const activity = plan.groupActivity
    if (activity !== undefined) {
      this.groupActivity = (options = {}) => activity(options)
    }
  }

  /** The fixed conditions, plus the change condition in delta mode. */
  #where(e: SqlEntity<unknown>, since: EpochMs | undefined): (params: Params) => string[] {
    const fixed = e.query.where ?? []
    const changed = since === undefined ? undefined : e.changedSince
    return (params) => (changed === undefined || since === undefined ? [...fixed] : [...fixed, changed(params, since)])
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const e = this.#table[entity]
    if (e === undefined) {
      return 0
    }
    const conn = e.conn ?? this.#conn
    const sql = buildCountQuery(conn.dialect, { from: e.query.from, where: this.#where(e, options.since) })
    const r = await conn.query(sql.sql, sql.params, `counting ${entity}`)
    return Number(r.rows[0]?.n ?? 0)
  }

  /** Rows changed at or after `since`; undefined for an entity without a change time. */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    const e = this.#table[entity]
    if (e === undefined) {
      return 0
    }
    return e.changedSince === undefined ? undefined : this.count(entity, { since })
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const e = this.#table[entity] as SqlEntity<LegacyRecordOf[E]> | undefined
    if (e === undefined) {
      return (async function* () {})()
    }
    const common = {
      conn: e.conn ?? this.#conn,
      entity,
      keys: e.query.keys,
      pageSize: options.pageSize ?? this.#pageSize,
      after: options.after,
      signal: options.signal,
      query: { select: e.query.select, from: e.query.from, where: this.#where(e, options.since) },
      legacyIdOf: (row: Row) => e.legacyIdOf(row),
    }
    const d = e.decode
    const spec: PagedReadSpec<LegacyRecordOf[E], RowDecoder<LegacyRecordOf[E]> | undefined> =
      typeof d === 'function'
        ? { ...common, decode: (row) => d(row) }
        : { ...common, enrich: (rows) => d.perPage(rows), decode: (row, page) => (page as RowDecoder<LegacyRecordOf[E]>)(row) }
    const screen = e.screen
    // Past the keyset pass (a resumed NULL-key pass) no row is screened.
    if (screen === undefined || options.after?.[NULL_KEYS_DONE] !== undefined) {
      return readPages(spec)
    }
    return (async function* () {
      spec.signal?.throwIfAborted()
      yield* readPages({ ...spec, screen: await screen() })
    })()
  }

  /**
   * The legacy ids of every row the entity lists (its keys query, else its query), keyset-paged in
   * key order, selecting only the key and id columns. Undefined for an entity the connector does
   * not read: there is nothing to compare with (every loaded item would look gone).
   */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> | undefined {
    const e = this.#table[entity]
    if (e === undefined) {
      return undefined
    }
    const q = e.keysQuery ?? e.query
    const where = q.where ?? []
    return readKeyPages({
      conn: e.conn ?? this.#conn,
      entity,
      keys: q.keys,
      idColumns: e.idColumns ?? [],
      query: { from: q.from, where: () => where },
      pageSize: options.pageSize,
      signal: options.signal,
      legacyIdOf: (row) => e.legacyIdOf(row),
    })
  }

  close(): Promise<void> {
    return this.#conn.close()
  }
}

/** Where a SQL connector's snapshot comes from. */
export interface SqlSource {
  readonly url: string
  readonly connectTimeoutMs: number
  readonly pageSize: number
}

/**
 * Opens the read-only snapshot and the session over the connector's plan (`plan` may query the
 * snapshot first: a schema probe, a realm or team check). When the plan throws, the snapshot is
 * closed and the error thrown as it is.
 */
export async function openSqlSession(source: SqlSource, plan: (conn: SnapshotConnection) => Promise<SqlSessionPlan>): Promise<SqlSession> {
  const conn = await openSnapshotConnection(source.url, { connectTimeoutMs: source.connectTimeoutMs })
  try {
    return new SqlSession(conn, await plan(conn), source.pageSize)
  } catch (err) {
    await conn.close()
    throw err
  }
}
