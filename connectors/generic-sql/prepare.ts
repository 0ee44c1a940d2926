/**
 * How the generic SQL connector gets its queries ready, before any row is read: each query's text
 * is checked before the source is opened (one statement, no locking read: `statement-check.ts`),
 * then each is probed inside the session (`SELECT * FROM (<query>) AS src LIMIT 0`) for the
 * columns it returns and for what the database refuses; every entity's problem is reported in one
 * error. Each prepared entity reads through a view of the connection whose read-only refusals
 * name the entity's query (`source.entities.<entity>.query`), wherever they happen later.
 */
import { ChatferryError, coerceError } from '../../src/errors.ts'
import { LEGACY_ENTITIES, type LegacyEntity } from '../../src/model/records.ts'
import type { KeyColumn } from '../sql/dialect.ts'
import { ReadOnlyRefusal } from '../sql/read-only.ts'
import type { SnapshotConnection } from '../sql/snapshot-connection.ts'
import { type EntityQuery, type GenericSqlConfig, queryExcerpt, queryTextProblems, stripQuery } from './config.ts'
import type { EntitySpec } from './entities/entity-spec.ts'
import { groups } from './entities/groups.ts'
import { members } from './entities/members.ts'
import { messages } from './entities/messages.ts'
import { users } from './entities/users.ts'

/** @internal */
export const ENTITY_SPECS: { readonly [E in LegacyEntity]: EntitySpec<E> } = { users, groups, members, messages }

/** An entity's query after the probe: its keys and the delta column it has. */
export interface PreparedEntity {
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
export function checkQueryTexts(config: GenericSqlConfig): void {
  const problems = queryTextProblems(config.url, config.entities).map((p) => {
    const query = config.entities[p.entity as LegacyEntity] as EntityQuery
    return `${queryLabel(p.entity as LegacyEntity, query)} is refused: chatferry reads the source read-only, and ${p.message}`
  })
  if (problems.length > 0) {
    throw queriesError(problems, false)
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
export async function prepare(conn: SnapshotConnection, config: GenericSqlConfig): Promise<Map<LegacyEntity, PreparedEntity>> {
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
