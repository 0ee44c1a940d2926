/**
 * The generic SQL connector: reads an in-house schema through one plain SELECT per entity that
 * returns the canonical columns (README.md), on Postgres, MySQL/MariaDB or SQLite. Each query is
 * wrapped as a subquery and paged by its key columns inside one read-only snapshot. Each query's
 * text is checked before the source is opened and its columns probed (with `LIMIT 0`) when the
 * session opens, before any row is read (`prepare.ts`).
 */
import type { GroupActivity, KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import type { EpochMs, LegacyEntity, LegacyRecordOf } from '../../src/model/records.ts'
import { decodeId, decodeTimestamp, FieldProblem, type TimeFormat } from '../sql/decode.ts'
import { buildCountQuery, Params } from '../sql/dialect.ts'
import { findDuplicateIds, idsCanRepeat } from '../sql/duplicate-ids.ts'
import { readKeyPages } from '../sql/key-pages.ts'
import { NULL_KEYS_DONE, type PagedReadSpec, readPages } from '../sql/paged-read.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { GenericSqlConfig } from './config.ts'
import type { EntitySpec } from './entities/entity-spec.ts'
import { type GenericSqlFiles, genericSqlFilesReader, genericSqlLocator } from './files.ts'
import { checkQueryTexts, prepare, type PreparedEntity } from './prepare.ts'

export { type GenericSqlConfig, type GenericSqlConfigInput, GenericSqlConfigSchema } from './config.ts'
/**
 * The value `since` is compared with, in the column's own representation. Delta mode keeps rows
 * changed *at or after* `since`, so rows sharing the watermark's instant are read again, never lost.
 * @internal
 */
export function deltaBound(since: EpochMs, format: TimeFormat, engine: SnapshotConnection['dialect']['engine']): string | number {
  switch (format) {
    case 'epoch-s':
      return Math.floor(since / 1000)
    case 'epoch-ms':
      return since
    case 'epoch-us':
      return since * 1000
    case 'iso':
      return new Date(since).toISOString()
    case 'auto': {
      const iso = new Date(since).toISOString()
      // Postgres parses either form; MySQL/MariaDB and SQLite text want the SQL form.
      return engine === 'postgres' ? iso : iso.replace('T', ' ').replace('Z', '')
    }
  }
}

class GenericSqlSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #conn: SnapshotConnection
  readonly #entities: Map<LegacyEntity, PreparedEntity>
  readonly #pageSize: number
  /** `source.files`: attachments then carry a locator. */
  readonly #files: GenericSqlFiles | undefined
  constructor(conn: SnapshotConnection, entities: Map<LegacyEntity, PreparedEntity>, pageSize: number, files?: GenericSqlFiles) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#entities = entities
    this.#pageSize = pageSize
    this.#files = files
  }

  #deltaWhere(p: PreparedEntity, since: EpochMs | undefined): ((params: Params) => string[]) | undefined {
    if (since === undefined || p.deltaColumn === undefined) {
      return undefined
    }
    const column = `src.${this.#conn.dialect.quote(p.deltaColumn)}`
    const bound = deltaBound(since, p.query.timeFormat, this.#conn.dialect.engine)
    return (params) => [`${column} >= ${params.add(bound)}`]
  }

  async count(entity: LegacyEntity, options: { since?: EpochMs } = {}): Promise<number> {
    const p = this.#entities.get(entity)
    if (p === undefined) {
      return 0
    }
    const where = this.#deltaWhere(p, options.since)
    const q = buildCountQuery(this.#conn.dialect, where ? { from: p.from, where } : { from: p.from })
    const r = await p.conn.query(q.sql, q.params, `counting ${entity}`)
    return Number(r.rows[0]?.n ?? 0)
  }

  /** Rows whose delta column is at or after `since`; undefined when the query returns no delta column. */
  async countChangedSince(entity: LegacyEntity, since: EpochMs): Promise<number | undefined> {
    const p = this.#entities.get(entity)
    if (p === undefined) {
      return 0
    }
    return p.deltaColumn === undefined ? undefined : this.count(entity, { since })
  }

  read<E extends LegacyEntity>(entity: E, options: ReadOptions = {}): AsyncIterable<Page<LegacyRecordOf[E]>> {
    const p = this.#entities.get(entity)
    if (p === undefined) {
      return (async function* () {})()
    }
    const where = this.#deltaWhere(p, options.since)
    const files = this.#files
    const ctx = {
      timeFormat: p.query.timeFormat,
      lossy: this.#conn.lossyText,
      ...(files === undefined ? {} : { locate: (item: Record<string, unknown>) => genericSqlLocator(files, item) }),
    }
    const spec = p.spec as unknown as EntitySpec<E>
    const read: PagedReadSpec<LegacyRecordOf[E]> = {
      conn: p.conn,
      entity,
      keys: p.keys,
      pageSize: options.pageSize ?? this.#pageSize,
      after: options.after,
      signal: options.signal,
      query: { select: 'src.*', from: p.from, ...(where ? { where } : {}) },
      decode: (row) => spec.decode(row, ctx),
      legacyIdOf: (row) => spec.legacyIdOf(row),
    }
    // Past the keyset pass (a resumed NULL-key pass) no row is screened.
    if (!idsCanRepeat(p.ids, p.keys) || options.after?.[NULL_KEYS_DONE] !== undefined) {
      return readPages(read)
    }
    return this.#screened(read, p)
  }

  /**
   * The legacy ids of the entity's query, keyset-paged by its configured keys, selecting only the
   * key and id columns of the wrapped query. Soft-deleted rows (a `deleted_at`, `deactivated_at`)
   * are yielded like any row: only a row gone from the query has vanished.
   */
  readKeys(entity: LegacyEntity, options: KeysOptions = {}): AsyncIterable<readonly string[]> | undefined {
    const p = this.#entities.get(entity)
    if (p === undefined) {
      // No query for the entity: nothing to compare with (every loaded item would look gone).
      return undefined
    }
    return readKeyPages({
      conn: this.#conn,
      entity,
      keys: p.keys,
      idColumns: p.ids,
      query: { from: p.from },
      pageSize: options.pageSize,
      signal: options.signal,
      legacyIdOf: (row) => p.spec.legacyIdOf(row),
    })
  }

  /** The read, each keyed row screened for a legacy id another row of the whole query holds under a smaller key. */
  async *#screened<T extends { readonly updatedAt?: EpochMs }>(read: PagedReadSpec<T>, p: PreparedEntity): AsyncGenerator<Page<T>, void, undefined> {
    read.signal?.throwIfAborted()
    const screen = await findDuplicateIds({
      conn: p.conn,
      entity: read.entity,
      ids: p.ids,
      keys: p.keys,
      query: { from: p.from },
      legacyIdOf: read.legacyIdOf,
    })
    yield* readPages({ ...read, screen })
  }

  /**
   * Per group: `min(joined_at)` of the members query and `min(sent_at)` of the messages query's
   * group messages, one grouped query each over the whole query, in this snapshot. The minimum is
   * the engine's order of the column (right for timestamp and epoch columns, and for text in one
   * format and offset, as delta mode's comparison); a minimum that does not decode is left out.
   */
  async groupActivity(options: { readonly signal?: AbortSignal } = {}): Promise<ReadonlyMap<string, GroupActivity>> {
    const found = new Map<string, { firstJoinedAt?: number; firstSentAt?: number }>()
    const entry = (id: string): { firstJoinedAt?: number; firstSentAt?: number } => {
      const e = found.get(id) ?? {}
      found.set(id, e)
      return e
    }
    const members = this.#entities.get('members')
    if (members?.columns.has('joined_at')) {
      for (const [id, t] of await this.#earliestPerGroup(members, 'group_id', 'joined_at', () => [])) {
        entry(id).firstJoinedAt = t
      }
    }
    options.signal?.throwIfAborted()
    const messages = this.#entities.get('messages')
    if (messages) {
      const type = `src.${this.#conn.dialect.quote('receiver_type')}`
      for (const [id, t] of await this.#earliestPerGroup(messages, 'receiver_id', 'sent_at', (params) => [`${type} = ${params.add('group')}`])) {
        entry(id).firstSentAt = t
      }
    }
    return found
  }

  /** `SELECT <id>, min(<time>) … GROUP BY <id>`, decoded: group id → epoch ms. */
  async #earliestPerGroup(
    p: PreparedEntity,
    idColumn: string,
    timeColumn: string,
    where: (params: Params) => string[],
  ): Promise<Map<string, number>> {
    const q = (name: string) => `src.${this.#conn.dialect.quote(name)}`
    const params = new Params(this.#conn.dialect)
    const conditions = [`${q(idColumn)} IS NOT NULL`, `${q(timeColumn)} IS NOT NULL`, ...where(params)]
    const sql = `SELECT ${q(idColumn)} AS gid, min(${q(timeColumn)}) AS t FROM ${p.from} WHERE ${conditions.join(' AND ')} GROUP BY ${q(idColumn)}`
    const r = await p.conn.query(sql, params.values, `finding the earliest ${timeColumn} of each group`)
    const earliest = new Map<string, number>()
    for (const row of r.rows) {
      try {
        const t = decodeTimestamp(timeColumn, row.t, p.query.timeFormat)
        if (t !== undefined) {
          earliest.set(decodeId(idColumn, row.gid, this.#conn.lossyText), t)
        }
      } catch (err) {
        if (!(err instanceof FieldProblem)) {
          throw err
        }
      }
    }
    return earliest
  }

  close(): Promise<void> {
    return this.#conn.close()
  }
}

/** The generic SQL connector for these settings. */
export function createGenericSqlConnector(config: GenericSqlConfig): SourceConnector {
  const files = config.files
  return {
    id: 'generic-sql',
    async open() {
      checkQueryTexts(config)
      const conn = await openSnapshotConnection(config.url, { connectTimeoutMs: config.connectTimeoutMs })
      try {
        return new GenericSqlSession(conn, await prepare(conn, config), config.pageSize, config.files)
      } catch (err) {
        await conn.close()
        throw err
      }
    },
    ...(files === undefined ? {} : { files: () => genericSqlFilesReader(files) }),
  }
}
