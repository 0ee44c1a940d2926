/**
 * Issue 24, part 3: the source session every SQL connector reads through
 * (`connectors/sql/snapshot-connection.ts`) is read-only by construction, on real Postgres,
 * MariaDB and SQLite. Each statement that tries to write, to lock rows, to run a second statement
 * or to end the read-only transaction is refused (`ReadOnlyRefusal`, `SOURCE_INVALID`), the
 * canary table keeps its rows, and the session stays usable and read-only afterwards.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, describe, expect, inject, it, vi } from 'vitest'

import { ReadOnlyRefusal } from '../../../connectors/sql/read-only.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../../../connectors/sql/snapshot-connection.ts'
import type { ChatferryError } from '../../../src/errors.ts'
import { type GenericEngine, openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { createMysqlTestDatabase } from '../../helpers/mysql.ts'

/** The canary and the writing functions each engine can have. */
const SETUP: Record<GenericEngine, string[]> = {
  postgres: [
    'CREATE TABLE canary (id integer PRIMARY KEY)',
    'INSERT INTO canary VALUES (1), (2), (3)',
    'CREATE SEQUENCE canary_seq',
    `CREATE FUNCTION evil_delete() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN DELETE FROM canary; RETURN 1; END $$`,
    `CREATE FUNCTION evil_insert(x integer) RETURNS integer LANGUAGE plpgsql AS $$ BEGIN INSERT INTO canary VALUES (100 + x); RETURN x; END $$`,
  ],
  mysql: [
    'CREATE TABLE canary (id integer PRIMARY KEY) ENGINE=InnoDB',
    'INSERT INTO canary VALUES (1), (2), (3)',
    'CREATE FUNCTION evil_delete() RETURNS integer MODIFIES SQL DATA BEGIN DELETE FROM canary; RETURN 1; END',
    'CREATE FUNCTION lock_rows() RETURNS integer READS SQL DATA BEGIN DECLARE n integer; SELECT count(*) INTO n FROM (SELECT id FROM canary FOR UPDATE) x; RETURN n; END',
  ],
  sqlite: ['CREATE TABLE canary (id integer PRIMARY KEY)', 'INSERT INTO canary VALUES (1), (2), (3)'],
}

/** What every engine refuses, and what each refuses besides. */
const COMMON = [
  'SELECT 1 AS id; DELETE FROM canary',
  'SELECT * FROM (SELECT 1 AS id) AS x; COMMIT; DELETE FROM canary; SELECT * FROM (SELECT 1) AS y',
  'COMMIT',
  'ROLLBACK',
  'DELETE FROM canary',
  'SELECT id FROM canary FOR UPDATE',
  'SELECT * FROM (SELECT id FROM canary) AS src /* closing the wrapper */ ) AS x; INSERT INTO canary VALUES (9); SELECT (1',
]
const BREAKOUTS: Record<GenericEngine, string[]> = {
  postgres: [
    ...COMMON,
    'SELECT * FROM (WITH d AS (DELETE FROM canary RETURNING *) SELECT * FROM d) AS src',
    'SELECT evil_delete() AS x',
    'SELECT evil_insert(id) AS x FROM canary',
    "SELECT set_config('transaction_read_only', 'off', false) AS x",
    "SELECT nextval('canary_seq') AS x",
    'SELECT id FROM canary FOR SHARE',
  ],
  mysql: [
    ...COMMON,
    'SELECT * FROM (SELECT evil_delete() AS x) AS src LIMIT 0',
    'SELECT lock_rows() AS x',
    'SELECT id FROM canary LOCK IN SHARE MODE',
    `SELECT id FROM canary INTO OUTFILE '/tmp/chatferry-canary-${process.pid}.txt'`,
    'SELECT id FROM canary /*!50000 FOR UPDATE */',
  ],
  sqlite: [...COMMON, "SELECT 1 AS id; ATTACH DATABASE 'evil.db' AS evil", 'SELECT 1 AS id; PRAGMA query_only = OFF'],
}

/** The session's own read-only settings, as the database reports them. */
const READ_ONLY_STATE: Record<GenericEngine, { sql: string; expected: Record<string, unknown> }> = {
  postgres: {
    sql: "SELECT current_setting('transaction_read_only') AS tx, current_setting('default_transaction_read_only') AS session",
    expected: { tx: 'on', session: 'on' },
  },
  mysql: { sql: 'SELECT @@session.tx_read_only AS session', expected: { session: 1 } },
  sqlite: { sql: 'SELECT query_only AS session FROM pragma_query_only', expected: { session: 1 } },
}

const dbs: TestDatabase[] = []
afterAll(async () => {
  for (const d of dbs) {
    await d.drop().catch(() => {})
  }
})

async function sourceUrl(engine: GenericEngine): Promise<string> {
  if (engine === 'sqlite') {
    return `sqlite:${join(mkdtempSync(join(tmpdir(), 'cf-ro-session-')), 'legacy.db')}`
  }
  const db = engine === 'postgres' ? await createTestDatabase('cf_ro_session') : await createMysqlTestDatabase('cf_ro_session')
  dbs.push(db)
  return db.url
}

async function canaryIds(engine: GenericEngine, url: string): Promise<number[]> {
  const conn = await openSnapshotConnection(url)
  try {
    return (await conn.query('SELECT id FROM canary ORDER BY id')).rows.map((r) => Number(r.id))
  } finally {
    await conn.close()
  }
}

async function refusal(conn: SnapshotConnection, sql: string): Promise<ChatferryError> {
  const err = await conn.probe(sql, 'the breakout').then(
    () => undefined,
    (e: unknown) => e,
  )
  expect(err, sql).toBeInstanceOf(ReadOnlyRefusal)
  return err as ChatferryError
}

for (const engine of ['postgres', 'mysql', 'sqlite'] as const) {
  describe.skipIf(engine === 'mysql' && inject('mysqlUrl') === undefined)(`${engine} source session`, () => {
    it('refuses every write, lock, second statement and end of the transaction; the canary keeps its rows', async () => {
      const url = await sourceUrl(engine)
      const w = await openGenericWriter(engine, url)
      for (const stmt of SETUP[engine]) {
        await w.exec(stmt)
      }
      await w.close()

      const conn = await openSnapshotConnection(url)
      try {
        for (const sql of BREAKOUTS[engine]) {
          const err = await refusal(conn, sql)
          expect(err.code).toBe('SOURCE_INVALID')
          expect(err.message).toMatch(/^the breakout refused: chatferry reads the source read-only, and the statement /)
          expect(err.message).not.toMatch(/cf-test-secret-/)
        }
        // Still the same read-only transaction, still usable.
        const state = await conn.query(READ_ONLY_STATE[engine].sql)
        expect(state.rows[0]).toMatchObject(READ_ONLY_STATE[engine].expected)
        expect(Number((await conn.query('SELECT count(*) AS n FROM canary')).rows[0]?.n)).toBe(3)
      } finally {
        await conn.close()
      }
      expect(await canaryIds(engine, url)).toEqual([1, 2, 3])
    })
  })
}

it.skipIf(inject('mysqlUrl') === undefined)('a MySQL/MariaDB URL asking for several statements per query is refused before connecting', async () => {
  const url = `${inject('mysqlUrl')}?multipleStatements=true`
  await expect(openSnapshotConnection(url)).rejects.toMatchObject({
    code: 'CONFIG_INVALID',
    message: expect.stringMatching(/source\.url must not set `multipleStatements`/),
  })
})

it('Postgres: every statement of a session, its own included, goes through the extended protocol (one statement each)', async () => {
  const url = await sourceUrl('postgres')
  const calls: unknown[] = []
  const original = pg.Client.prototype.query
  const spy = vi.spyOn(pg.Client.prototype, 'query').mockImplementation(function (this: pg.Client, ...args: unknown[]) {
    calls.push(args[0])
    return (original as (...a: unknown[]) => unknown).apply(this, args) as never
  })
  try {
    const conn = await openSnapshotConnection(url)
    await conn.query('SELECT 1 AS x')
    await conn.probe('SELECT 2 AS x', 'a probe')
    await conn.probe('SELECT nope FROM nowhere', 'a failing probe').catch(() => {})
    await conn.close()
  } finally {
    spy.mockRestore()
  }
  expect(calls.length).toBeGreaterThanOrEqual(8)
  for (const c of calls) {
    expect(c, JSON.stringify(c)).toMatchObject({ queryMode: 'extended' })
  }
})
