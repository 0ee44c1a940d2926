/**
 * Nextcloud's table names (every table carries the install's `dbtableprefix`, `oc_` by default) and
 * the optional columns: Talk and the server add columns release by release, so the session probes
 * which of them the install has (one `SELECT … WHERE 1 = 0` per table) and reads NULL for the rest.
 */
import type { Dialect } from '../../sql/dialect.ts'
import type { SnapshotConnection } from '../../sql/snapshot-connection.ts'

/** The tables the connector reads, unprefixed (`filecache` and `storages` only with `source.files`). */
export const NC_TABLES = ['users', 'accounts', 'preferences', 'talk_rooms', 'talk_attendees', 'comments', 'share', 'filecache', 'storages'] as const
export type NcTable = (typeof NC_TABLES)[number]

/** Columns read only when the install has them (name → the release that added it). */
export const OPTIONAL_COLUMNS: Readonly<Partial<Record<NcTable, readonly string[]>>> = {
  // Talk: description (8), listable (10), remote_server (18), avatar (17), last_activity (3).
  talk_rooms: ['description', 'listable', 'remote_server', 'avatar', 'last_activity', 'read_only', 'object_type', 'object_id'],
  // Server: meta_data and reference_id (29; Talk 19 edits live in meta_data).
  comments: ['meta_data', 'reference_id'],
}

/** How SQL names Nextcloud's tables and optional columns for one install. */
export interface NcSchema {
  readonly dialect: Dialect
  /** The quoted, prefixed table name. */
  table(name: NcTable): string
  /** `alias.column` quoted, or `NULL` when the install lacks that optional column. */
  column(table: NcTable, alias: string, name: string): string
  /** `alias.column` quoted (a column every supported release has). */
  col(alias: string, name: string): string
}

/** Builds the schema namer from the columns the install has. */
export function ncSchema(dialect: Dialect, prefix: string, present: ReadonlyMap<NcTable, ReadonlySet<string>>): NcSchema {
  const q = dialect.quote
  return {
    dialect,
    table: (name) => q(`${prefix}${name}`),
    col: (alias, name) => `${alias}.${q(name)}`,
    column(table, alias, name) {
      return present.get(table)?.has(name) === true ? `${alias}.${q(name)}` : 'NULL'
    },
  }
}

/**
 * Probes the optional columns. A missing required table fails with a message naming it and the
 * prefix, so a wrong `tablePrefix` is told apart from an unreachable database.
 */
export async function probeSchema(conn: SnapshotConnection, prefix: string): Promise<NcSchema> {
  const present = new Map<NcTable, ReadonlySet<string>>()
  for (const table of Object.keys(OPTIONAL_COLUMNS) as NcTable[]) {
    const name = conn.dialect.quote(`${prefix}${table}`)
    const r = await conn.query(
      `SELECT * FROM ${name} WHERE 1 = 0`,
      [],
      `reading the columns of ${prefix}${table} (is tablePrefix "${prefix}" right?)`,
    )
    present.set(table, new Set(r.columns.map((c) => c.toLowerCase())))
  }
  return ncSchema(conn.dialect, prefix, present)
}
