/**
 * The generic SQL connector's entity table for the shared SQL session (`connectors/sql/session.ts`),
 * from its prepared queries (`prepare.ts`): each query wrapped as the subquery `src` and paged by
 * its configured keys, read through the entity's own view of the connection (refusals name the
 * query), its delta column compared in the column's own representation, and — when a key column
 * is not part of the legacy id — each read screened for an id that another key holds
 * (`../sql/duplicate-ids.ts`). An entity without a query is absent. `readKeys` selects the key and
 * id columns of the wrapped query: soft-deleted rows (a `deleted_at`, `deactivated_at`) are listed
 * like any row; only a row gone from the query has vanished.
 */
import type { EpochMs, LegacyEntity } from '../../src/model/records.ts'
import type { TimeFormat } from '../sql/decode.ts'
import type { Params } from '../sql/dialect.ts'
import { findDuplicateIds, idsCanRepeat } from '../sql/duplicate-ids.ts'
import type { SqlEntity, SqlEntityTable } from '../sql/session.ts'
import type { SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { DecodeContext } from './entities/entity-spec.ts'
import { type GenericSqlFiles, genericSqlLocator } from './files.ts'
import type { PreparedEntity } from './prepare.ts'

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

/** One prepared query as an entity of the table. */
function tableEntity(entity: LegacyEntity, p: PreparedEntity, ctx: DecodeContext): SqlEntity<ReturnType<PreparedEntity['spec']['decode']>> {
  const { dialect } = p.conn
  const deltaColumn = p.deltaColumn === undefined ? undefined : `src.${dialect.quote(p.deltaColumn)}`
  const legacyIdOf = (row: Record<string, unknown>): string => p.spec.legacyIdOf(row)
  return {
    query: { select: 'src.*', from: p.from, keys: p.keys },
    ...(deltaColumn === undefined
      ? {}
      : {
          changedSince: (params: Params, since: EpochMs) => `${deltaColumn} >= ${params.add(deltaBound(since, p.query.timeFormat, dialect.engine))}`,
        }),
    idColumns: p.ids,
    conn: p.conn,
    legacyIdOf,
    decode: (row) => p.spec.decode(row, ctx),
    ...(idsCanRepeat(p.ids, p.keys)
      ? { screen: () => findDuplicateIds({ conn: p.conn, entity, ids: p.ids, keys: p.keys, query: { from: p.from }, legacyIdOf }) }
      : {}),
  }
}

/** The table of the configured queries; `files`: attachments then carry a locator. */
export function genericSqlTable(
  conn: SnapshotConnection,
  entities: ReadonlyMap<LegacyEntity, PreparedEntity>,
  files?: GenericSqlFiles,
): SqlEntityTable {
  const table: { -readonly [E in LegacyEntity]?: SqlEntityTable[E] } = {}
  for (const [entity, p] of entities) {
    const ctx: DecodeContext = {
      timeFormat: p.query.timeFormat,
      lossy: conn.lossyText,
      ...(files === undefined ? {} : { locate: (item: Record<string, unknown>) => genericSqlLocator(files, item) }),
    }
    // A prepared entity's records are its entity's (its spec was picked by entity): the map's
    // union types cannot say so.
    ;(table as Record<LegacyEntity, unknown>)[entity] = tableEntity(entity, p, ctx)
  }
  return table
}
