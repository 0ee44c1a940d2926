/**
 * One connection to the source database, inside one read-only transaction that sees one consistent
 * snapshot for its whole life, for each engine chatferry reads:
 * - Postgres: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` (the snapshot is taken by the first
 *   query, which runs right away);
 * - MySQL/MariaDB: `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ` then
 *   `START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY` (InnoDB tables);
 * - SQLite (`node:sqlite`, read-only): `BEGIN` plus a first read. In WAL mode writers go on and
 *   this connection keeps its snapshot; in rollback-journal mode writers wait until it closes.
 * Every failure becomes `ChatferryError('SOURCE_UNAVAILABLE')` naming the source without its password.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite'

import pg from 'pg'

import { ChatferryError } from '../../src/errors.ts'
import type { EpochMs } from '../../src/model/records.ts'
import { type Dialect, DIALECTS } from './dialect.ts'
import { engineOf, SOURCE_URL_FORMS, sourceUnavailable, sqlitePathOf } from './source-url.ts'

/** What a query returns: rows as objects keyed by column name, and the column names in order. */
export interface SqlResult {
  readonly rows: Record<string, unknown>[]
  readonly columns: readonly string[]
  /**
   * MySQL/MariaDB only: the columns that hold character data (a character set other than
   * `binary`), whose default collations make `Bob` equal `bob`. See `KeyColumn.text`.
   */
  readonly textColumns?: ReadonlySet<string>
}

/** A connection holding one read-only snapshot. Queries run one at a time, in call order. */
export interface SnapshotConnection {
  readonly dialect: Dialect
  /** The database's clock when the snapshot was taken (SQLite: this process's clock). */
  readonly snapshotAt: EpochMs
  /**
   * True when the driver decodes text itself and replaces undecodable bytes with U+FFFD (SQLite,
   * Postgres databases in `SQL_ASCII`), so a U+FFFD must be read as invalid UTF-8.
   */
  readonly lossyText: boolean
  /** Runs one statement; failures become `SOURCE_UNAVAILABLE` errors mentioning `what`. */
  query(sql: string, params?: readonly unknown[], what?: string): Promise<SqlResult>
  /** Ends the transaction and the connection; idempotent, never throws. */
  close(): Promise<void>
}

/** Options for {@link openSnapshotConnection}. */
export interface SnapshotOptions {
  /** Milliseconds to wait for the connection. @default 10000 */
  readonly connectTimeoutMs?: number
}

/** Opens a connection to `url` and starts its read-only snapshot. */
export async function openSnapshotConnection(url: string, options: SnapshotOptions = {}): Promise<SnapshotConnection> {
  const engine = engineOf(url)
  switch (engine) {
    case 'postgres':
      return openPostgres(url, options)
    case 'mysql':
      return openMysql(url, options)
    case 'sqlite':
      return openSqlite(url)
    default:
      throw new ChatferryError('CONFIG_INVALID', `source.url must be ${SOURCE_URL_FORMS}`)
  }
}

// Bigints that fit a double become numbers (epoch ms do); timestamps and dates stay the text the
// server sent, so the decoders (not the driver's local-time parser) read them and cursors round-trip.
const PG_TYPES = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    switch (oid) {
      case 20:
        return (v: string) => {
          const n = Number(v)
          return Number.isSafeInteger(n) ? n : v
        }
      case 1082:
      case 1114:
      case 1184:
      case 1700:
        return (v: string) => v
      default:
        return pg.types.getTypeParser(oid, format ?? 'text')
    }
  },
} as unknown as pg.CustomTypesConfig

async function openPostgres(url: string, options: SnapshotOptions): Promise<SnapshotConnection> {
  const client = new pg.Client({
    connectionString: url,
    types: PG_TYPES,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
    application_name: 'chatferry-source',
  })
  // A dropped connection is reported by the next query; it must not crash the process meanwhile.
  client.on('error', () => {})
  let snapshotAt: number
  let lossy: boolean
  try {
    await client.connect()
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    await client.query("SET LOCAL TIME ZONE 'UTC'")
    const r = await client.query<{ t: number; enc: string }>(
      "SELECT (extract(epoch FROM now()) * 1000)::float8 AS t, current_setting('server_encoding') AS enc",
    )
    snapshotAt = Math.floor(Number(r.rows[0]?.t))
    lossy = r.rows[0]?.enc === 'SQL_ASCII'
  } catch (err) {
    await client.end().catch(() => {})
    throw sourceUnavailable(url, 'cannot open the source database', err)
  }
  let closed = false
  return {
    dialect: DIALECTS.postgres,
    snapshotAt,
    lossyText: lossy,
    async query(sql, params = [], what = 'query') {
      try {
        const r = await client.query({ text: sql, values: params as unknown[] })
        return { rows: r.rows as Record<string, unknown>[], columns: r.fields.map((f) => f.name) }
      } catch (err) {
        throw sourceUnavailable(url, `${what} failed on the source database`, err)
      }
    },
    async close() {
      if (closed) {
        return
      }
      closed = true
      await client.query('ROLLBACK').catch(() => {})
      await client.end().catch(() => {})
    },
  }
}

async function openMysql(url: string, options: SnapshotOptions): Promise<SnapshotConnection> {
  const mysql = await import('mysql2/promise')
  let conn: import('mysql2/promise').Connection | undefined
  let snapshotAt: number
  try {
    conn = await mysql.createConnection({
      uri: url.replace(/^mariadb:/i, 'mysql:'),
      dateStrings: true,
      supportBigNumbers: true,
      timezone: 'Z',
      charset: 'utf8mb4',
      connectTimeout: options.connectTimeoutMs ?? 10_000,
    })
    conn.on('error', () => {})
    await conn.query("SET SESSION time_zone = '+00:00'")
    await conn.query('SET TRANSACTION ISOLATION LEVEL REPEATABLE READ')
    await conn.query('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY')
    const [rows] = await conn.query('SELECT UNIX_TIMESTAMP(NOW(3)) * 1000 AS t')
    snapshotAt = Math.floor(Number((rows as { t: unknown }[])[0]?.t))
  } catch (err) {
    await conn?.end().catch(() => {})
    throw sourceUnavailable(url, 'cannot open the source database', err)
  }
  const c = conn
  let closed = false
  return {
    dialect: DIALECTS.mysql,
    snapshotAt,
    lossyText: false,
    async query(sql, params = [], what = 'query') {
      try {
        const [rows, fields] = await c.query({ sql, values: params as unknown[] })
        return {
          rows: rows as Record<string, unknown>[],
          columns: (fields ?? []).map((f) => f.name),
          // Character set 63 is `binary`: numbers, temporals, BINARY/BLOB columns.
          textColumns: new Set((fields ?? []).filter((f) => f.characterSet !== undefined && f.characterSet !== 63).map((f) => f.name)),
        }
      } catch (err) {
        throw sourceUnavailable(url, `${what} failed on the source database`, err)
      }
    },
    async close() {
      if (closed) {
        return
      }
      closed = true
      await c.query('ROLLBACK').catch(() => {})
      await c.end().catch(() => {})
    },
  }
}

const MAX_CACHED_STATEMENTS = 32

async function openSqlite(url: string): Promise<SnapshotConnection> {
  const path = sqlitePathOf(url)
  let db: DatabaseSync
  try {
    db = new DatabaseSync(path, { readOnly: true, timeout: 5_000 })
    db.exec('BEGIN')
    // The first read fixes the snapshot.
    db.prepare('SELECT count(*) AS n FROM sqlite_schema').get()
  } catch (err) {
    throw sourceUnavailable(url, 'cannot open the source database', err)
  }
  const snapshotAt = Date.now()
  const statements = new Map<string, StatementSync>()
  let closed = false
  return {
    dialect: DIALECTS.sqlite,
    snapshotAt,
    lossyText: true,
    async query(sql, params = [], what = 'query') {
      try {
        let stmt = statements.get(sql)
        if (stmt === undefined) {
          stmt = db.prepare(sql)
          if (statements.size >= MAX_CACHED_STATEMENTS) {
            statements.clear()
          }
          statements.set(sql, stmt)
        }
        const rows = stmt.all(...(params as (string | number | null)[])) as Record<string, unknown>[]
        return { rows, columns: stmt.columns().map((c) => c.name) }
      } catch (err) {
        throw sourceUnavailable(url, `${what} failed on the source database`, err)
      }
    },
    async close() {
      if (closed) {
        return
      }
      closed = true
      statements.clear()
      try {
        if (db.isTransaction) {
          db.exec('ROLLBACK')
        }
        db.close()
      } catch {
        // already closed
      }
    },
  }
}
