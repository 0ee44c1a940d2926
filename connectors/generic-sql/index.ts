/**
 * The generic SQL connector: reads an in-house schema through one plain SELECT per entity that
 * returns the canonical columns (README.md), on Postgres, MySQL/MariaDB or SQLite. Each query is
 * wrapped as a subquery and paged by its key columns inside one read-only snapshot. Before the
 * source is opened each query's text is checked (one statement, no locking read: `statement-check.ts`);
 * when the session opens each is probed (with `LIMIT 0`) for its columns and for what the database
 * refuses, every entity's problems reported at once, before any row is read. A statement the
 * database refuses later (a function that writes, called on a row) stops the read as a
 * configuration error naming the entity's query.
 */
import { ChatferryError, coerceError } from '../../src/errors.ts'
import type { GroupActivity, KeysOptions, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import { type EpochMs, LEGACY_ENTITIES, type LegacyEntity, type LegacyRecordOf } from '../../src/model/records.ts'
import { decodeId, decodeTimestamp, FieldProblem, type TimeFormat } from '../sql/decode.ts'
import { buildCountQuery, type KeyColumn, Params } from '../sql/dialect.ts'
import { findDuplicateIds, idsCanRepeat } from '../sql/duplicate-ids.ts'
import { readKeyPages } from '../sql/key-pages.ts'
import { NULL_KEYS_DONE, type PagedReadSpec, readPages } from '../sql/paged-read.ts'
import { ReadOnlyRefusal } from '../sql/read-only.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../sql/snapshot-connection.ts'
import { type EntityQuery, type GenericSqlConfig, queryExcerpt, queryTextProblems, stripQuery } from './config.ts'
import type { EntitySpec } from './entities/entity-spec.ts'
import { groups } from './entities/groups.ts'
import { members } from './entities/members.ts'
import { messages } from './entities/messages.ts'
import { users } from './entities/users.ts'

export { type GenericSqlConfig, type GenericSqlConfigInput, GenericSqlConfigSchema } from './config.ts'

/** @internal */
export const ENTITY_SPECS: { readonly [E in LegacyEntity]: EntitySpec<E> } = { users, groups, members, messages }

/** An entity's query after the probe: its keys and the delta column it has. */
interface PreparedEntity {
  readonly spec: EntitySpec<LegacyEntity>
  readonly query: EntityQuery
  /** The session's connection, whose refusals name this entity's query. */
  readonly conn: SnapshotConnection
  readonly from: string
  readonly keys: readonly KeyColumn[]
  /** The legacy id's columns. */
  readonly ids: readonly KeyColumn[]
  readonly deltaColumn: string | undefined
  /** The columns the query returns. */
  readonly columns: ReadonlySet<string>
}

/** `source.entities.users.query (\`SELECT …\`)`: where a problem is, for messages. */
function queryLabel(entity: LegacyEntity, query: EntityQuery): string {
  return `source.entities.${entity}.query (\`${queryExcerpt(query.query)}\`)`
}

/** The connection as an entity's reads use it: a statement refused as read-only names the query. */
function entityConnection(conn: SnapshotConnection, entity: LegacyEntity, query: EntityQuery): SnapshotConnection {
  const named = (err: unknown): Error =>
    err instanceof ReadOnlyRefusal
      ? new ChatferryError('CONFIG_INVALID', `${queryLabel(entity, query)}: ${err.message}`, { cause: err })
      : coerceError(err)
  return {
    dialect: conn.dialect,
    snapshotAt: conn.snapshotAt,
    lossyText: conn.lossyText,
    query: (sql, params, what) => conn.query(sql, params, what).catch((err: unknown) => Promise.reject(named(err))),
    probe: (sql, what) => conn.probe(sql, what).catch((err: unknown) => Promise.reject(named(err))),
    close: () => conn.close(),
  }
}

/** One error listing every problem the queries have: `CONFIG_INVALID`, or `SOURCE_INVALID` when the database refused one. */
function queriesError(problems: readonly string[], sourceRefused: boolean): ChatferryError {
  const code = sourceRefused ? 'SOURCE_INVALID' : 'CONFIG_INVALID'
  if (problems.length === 1) {
    return new ChatferryError(code, problems[0] as string)
  }
  return new ChatferryError(code, `${problems.length} problems in source.entities:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
}

/** The configured queries' text problems (one statement, no locking read), before any I/O. */
function checkQueryTexts(config: GenericSqlConfig): void {
  const problems = queryTextProblems(config.url, config.entities).map((p) => {
    const query = config.entities[p.entity as LegacyEntity] as EntityQuery
    return `${queryLabel(p.entity as LegacyEntity, query)} is refused: chatferry reads the source read-only, and ${p.message}`
  })
  if (problems.length > 0) {
    throw queriesError(problems, false)
  }
}

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

/** Probes one entity's query (`LIMIT 0`): its columns, or the problem it has. */
async function prepareEntity(
  conn: SnapshotConnection,
  entity: LegacyEntity,
  query: EntityQuery,
): Promise<PreparedEntity | { problem: string; sourceRefused: boolean }> {
  const q = (id: string) => conn.dialect.quote(id)
  const spec = ENTITY_SPECS[entity] as EntitySpec<LegacyEntity>
  // The newline keeps a trailing `-- comment` of the query from swallowing the wrapper's `)`.
  const from = `(${stripQuery(query.query)}\n) AS src`
  let probe: Awaited<ReturnType<SnapshotConnection['probe']>>
  try {
    probe = await conn.probe(`SELECT * FROM ${from} LIMIT 0`, `checking the ${entity} query`)
  } catch (err) {
    // The database refuses the query as written (a write, a lock, a missing table, a syntax
    // error): a problem of this entity, reported with the others'.
    if (err instanceof ChatferryError && err.code === 'SOURCE_INVALID') {
      return { problem: `${queryLabel(entity, query)}: ${err.message}`, sourceRefused: !(err instanceof ReadOnlyRefusal) }
    }
    throw err
  }
  const columns = new Set(probe.columns)
  const keyNames = query.keys ?? spec.defaultKeys
  const missing = [...spec.required, ...keyNames].find((column) => !columns.has(column))
  if (missing !== undefined) {
    return {
      problem: `source.entities.${entity}.query does not return the required column \`${missing}\` (it returns: ${probe.columns.join(', ') || 'nothing'})`,
      sourceRefused: false,
    }
  }
  const column = (name: string): KeyColumn => ({ name, expr: `src.${q(name)}`, text: probe.textColumns?.has(name) ?? false })
  return {
    spec,
    query,
    conn: entityConnection(conn, entity, query),
    from,
    keys: keyNames.map(column),
    ids: spec.idColumns.map(column),
    deltaColumn: spec.deltaColumns.find((c) => columns.has(c)),
    columns,
  }
}

/** Probes every entity's query; throws one error listing every entity's problem. */
async function prepare(conn: SnapshotConnection, config: GenericSqlConfig): Promise<Map<LegacyEntity, PreparedEntity>> {
  const prepared = new Map<LegacyEntity, PreparedEntity>()
  const problems: string[] = []
  let sourceRefused = false
  for (const entity of LEGACY_ENTITIES) {
    const query = config.entities[entity]
    if (query === undefined) {
      continue
    }
    const p = await prepareEntity(conn, entity, query)
    if ('problem' in p) {
      problems.push(p.problem)
      sourceRefused ||= p.sourceRefused
    } else {
      prepared.set(entity, p)
    }
  }
  if (problems.length > 0) {
    throw queriesError(problems, sourceRefused)
  }
  return prepared
}

class GenericSqlSession implements SourceSession {
  readonly snapshotAt: EpochMs
  readonly #conn: SnapshotConnection
  readonly #entities: Map<LegacyEntity, PreparedEntity>
  readonly #pageSize: number
  constructor(conn: SnapshotConnection, entities: Map<LegacyEntity, PreparedEntity>, pageSize: number) {
    this.snapshotAt = conn.snapshotAt
    this.#conn = conn
    this.#entities = entities
    this.#pageSize = pageSize
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
    const ctx = { timeFormat: p.query.timeFormat, lossy: this.#conn.lossyText }
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
  return {
    id: 'generic-sql',
    async open() {
      checkQueryTexts(config)
      const conn = await openSnapshotConnection(config.url, { connectTimeoutMs: config.connectTimeoutMs })
      try {
        return new GenericSqlSession(conn, await prepare(conn, config), config.pageSize)
      } catch (err) {
        await conn.close()
        throw err
      }
    },
  }
}
