/**
 * One connection to the source database, inside one read-only transaction that sees one consistent
 * snapshot for its whole life, for each engine chatferry reads:
 * - Postgres: `BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY` then
 *   `SET SESSION default_transaction_read_only = on` (the snapshot is taken by the first query,
 *   which runs right away); every statement goes through the extended query protocol, which runs
 *   exactly one statement (the simple protocol would run `…; COMMIT; DELETE …`);
 * - MySQL/MariaDB: the `MULTI_STATEMENTS` capability off (checked after connecting),
 *   `SET SESSION TRANSACTION READ ONLY`, `SET TRANSACTION ISOLATION LEVEL REPEATABLE READ` then
 *   `START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY` (InnoDB tables);
 * - SQLite (`node:sqlite`, opened read-only, `PRAGMA query_only = ON`): `BEGIN` plus a first read.
 *   A statement with more text after its end is refused (`prepare` would silently drop the rest).
 *   In WAL mode writers go on and this connection keeps its snapshot; in rollback-journal mode
 *   writers wait until it closes.
 * Every statement is checked before it is sent (`read-only.ts`: one SELECT, no locking read, no
 * file written); a statement refused, or one the database refuses as a write, a lock or the end of
 * the transaction, is a `ReadOnlyRefusal` (`SOURCE_INVALID`, exit 2). Every other failure becomes
 * `ChatferryError('SOURCE_UNAVAILABLE')` (or `SOURCE_INVALID`) naming the source without its password.
 */
import { DatabaseSync, type StatementSync } from 'node:sqlite'

import pg from 'pg'

import { ChatferryError } from '../../src/errors.ts'
import type { EpochMs } from '../../src/model/records.ts'
import { type Dialect, DIALECTS } from './dialect.ts'
import { asRefusal, assertReadOnlyStatement, ReadOnlyRefusal, urlReadOnlyProblems } from './read-only.ts'
import { engineOf, SOURCE_URL_FORMS, sourceUnavailable, type SqlEngine, sqlitePathOf } from './source-url.ts'
import { lexCode } from './statement-check.ts'

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
  /**
   * Runs one SELECT; failures become `SOURCE_UNAVAILABLE` errors mentioning `what`, a statement
   * that would write, lock or end the transaction a `ReadOnlyRefusal`.
   */
  query(sql: string, params?: readonly unknown[], what?: string): Promise<SqlResult>
  /**
   * Runs one SELECT like {@link query}, except that its failure leaves the transaction usable
   * (Postgres: inside a savepoint), so checks can go on and report every problem at once.
   */
  probe(sql: string, what: string): Promise<SqlResult>
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

/** The error a failed statement becomes: a refusal when the database refused a write. */
function failure(url: string, engine: SqlEngine, what: string, err: unknown): ChatferryError {
  if (err instanceof ReadOnlyRefusal) {
    return err
  }
  return asRefusal(url, engine, what, err) ?? sourceUnavailable(url, `${what} failed on the source database`, err)
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
  // One statement per query, always: never the simple query protocol.
  // (`queryMode` is missing from the driver's type declarations.)
  const run = <R extends pg.QueryResultRow>(text: string, values: readonly unknown[] = []): Promise<pg.QueryResult<R>> =>
    client.query<R>({ text, values: values as unknown[], queryMode: 'extended' } as pg.QueryConfig)
  let snapshotAt: number
  let lossy: boolean
  try {
    await client.connect()
    await run('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    // Inside the transaction: should anything ever commit it, the setting is committed with it and
    // every later statement is read-only too; our ROLLBACK undoes it, so nothing outlives the
    // session even on a pooled server connection (PgBouncer in transaction mode).
    await run('SET SESSION default_transaction_read_only = on')
    await run("SET LOCAL TIME ZONE 'UTC'")
    const r = await run<{ t: number; enc: string }>(
      "SELECT (extract(epoch FROM now()) * 1000)::float8 AS t, current_setting('server_encoding') AS enc",
    )
    snapshotAt = Math.floor(Number(r.rows[0]?.t))
    lossy = r.rows[0]?.enc === 'SQL_ASCII'
  } catch (err) {
    await client.end().catch(() => {})
    throw sourceUnavailable(url, 'cannot open the source database', err)
  }
  let closed = false
  const query = async (sql: string, params: readonly unknown[] = [], what = 'query'): Promise<SqlResult> => {
    try {
      assertReadOnlyStatement(url, 'postgres', sql, what)
      const r = await run(sql, params)
      return { rows: r.rows as Record<string, unknown>[], columns: r.fields.map((f) => f.name) }
    } catch (err) {
      throw failure(url, 'postgres', what, err)
    }
  }
  return {
    dialect: DIALECTS.postgres,
    snapshotAt,
    lossyText: lossy,
    query,
    async probe(sql, what) {
      await run('SAVEPOINT chatferry_probe').catch((err: unknown) => {
        throw failure(url, 'postgres', what, err)
      })
      try {
        return await query(sql, [], what)
      } catch (err) {
        await run('ROLLBACK TO SAVEPOINT chatferry_probe').catch(() => {})
        throw err
      } finally {
        await run('RELEASE SAVEPOINT chatferry_probe').catch(() => {})
      }
    },
    async close() {
      if (closed) {
        return
      }
      closed = true
      await run('ROLLBACK').catch(() => {})
      await client.end().catch(() => {})
    },
  }
}

/** The `MULTI_STATEMENTS` client capability: the server runs `a; b` when the client sets it. */
const MYSQL_MULTI_STATEMENTS = 1 << 16

async function openMysql(url: string, options: SnapshotOptions): Promise<SnapshotConnection> {
  const unsafe = urlReadOnlyProblems(url)
  if (unsafe.length > 0) {
    throw new ChatferryError('CONFIG_INVALID', `source.url ${unsafe.join('; ')}`)
  }
  const mysql = await import('mysql2/promise')
  let conn: import('mysql2/promise').Connection | undefined
  let snapshotAt: number
  try {
    conn = await mysql.createConnection({
      uri: url.replace(/^mariadb:/i, 'mysql:'),
      // A truthy `flags` wins over the URL's; with the capability off the server refuses `a; b`.
      multipleStatements: false,
      flags: ['-MULTI_STATEMENTS'],
      dateStrings: true,
      supportBigNumbers: true,
      timezone: 'Z',
      charset: 'utf8mb4',
      connectTimeout: options.connectTimeoutMs ?? 10_000,
    })
    conn.on('error', () => {})
    const flags = (conn as unknown as { connection?: { config?: { clientFlags?: unknown } } }).connection?.config?.clientFlags
    if (typeof flags !== 'number' || (flags & MYSQL_MULTI_STATEMENTS) !== 0) {
      throw new Error('the connection would allow several statements per query')
    }
    await conn.query("SET SESSION time_zone = '+00:00'")
    await conn.query('SET SESSION TRANSACTION READ ONLY')
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
  const query = async (sql: string, params: readonly unknown[] = [], what = 'query'): Promise<SqlResult> => {
    try {
      assertReadOnlyStatement(url, 'mysql', sql, what)
      const [rows, fields] = await c.query({ sql, values: params as unknown[] })
      return {
        rows: rows as Record<string, unknown>[],
        columns: (fields ?? []).map((f) => f.name),
        // Character set 63 is `binary`: numbers, temporals, BINARY/BLOB columns.
        textColumns: new Set((fields ?? []).filter((f) => f.characterSet !== undefined && f.characterSet !== 63).map((f) => f.name)),
      }
    } catch (err) {
      throw failure(url, 'mysql', what, err)
    }
  }
  return {
    dialect: DIALECTS.mysql,
    snapshotAt,
    lossyText: false,
    query,
    // A failed statement leaves a MySQL/MariaDB transaction as it was.
    probe: (sql, what) => query(sql, [], what),
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
    // Read-only file handle, and no write of any kind (not even a TEMP table) on this connection.
    db.exec('PRAGMA query_only = ON')
    db.exec('BEGIN')
    // The first read fixes the snapshot.
    db.prepare('SELECT count(*) AS n FROM sqlite_schema').get()
  } catch (err) {
    throw sourceUnavailable(url, 'cannot open the source database', err)
  }
  const snapshotAt = Date.now()
  const statements = new Map<string, StatementSync>()
  let closed = false
  const prepare = (sql: string, what: string): StatementSync => {
    let stmt = statements.get(sql)
    if (stmt === undefined) {
      assertReadOnlyStatement(url, 'sqlite', sql, what)
      stmt = db.prepare(sql)
      assertWholeStatement(url, sql, stmt.sourceSQL, what)
      if (statements.size >= MAX_CACHED_STATEMENTS) {
        statements.clear()
      }
      statements.set(sql, stmt)
    }
    return stmt
  }
  const query = async (sql: string, params: readonly unknown[] = [], what = 'query'): Promise<SqlResult> => {
    try {
      const stmt = prepare(sql, what)
      const rows = stmt.all(...(params as (string | number | null)[])) as Record<string, unknown>[]
      return { rows, columns: stmt.columns().map((c) => c.name) }
    } catch (err) {
      throw failure(url, 'sqlite', what, err)
    }
  }
  return {
    dialect: DIALECTS.sqlite,
    snapshotAt,
    lossyText: true,
    query,
    probe: (sql, what) => query(sql, [], what),
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

/**
 * SQLite's `prepare` compiles the first statement of its text and drops the rest: any code after
 * the statement it compiled (`sourceSQL`) is refused, so `SELECT …; DELETE …` never half-runs.
 */
function assertWholeStatement(url: string, sql: string, compiled: string, what: string): void {
  const start = sql.indexOf(compiled)
  const rest = start < 0 ? sql : sql.slice(start + compiled.length)
  if (lexCode(rest, 'sqlite', false).code.replaceAll(';', '').trim() !== '') {
    throw new ReadOnlyRefusal(url, what, 'the statement is more than one statement')
  }
}
