/**
 * Issue 24, part 3, through `chatferry run` as a process on Postgres, MariaDB and SQLite: generic-sql
 * queries that try to break out of the read-only snapshot — a second statement (`…; DELETE FROM
 * canary`), closing the wrapper and `COMMIT; DELETE …`, a locking read, a writable CTE, a function
 * that writes — each leave the canary table's rows as they were, and the run exits 2 with a message
 * naming each offending entity's query (all of them at once where they are found before reading),
 * never the source's password. Nothing is loaded.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { describe, expect, inject, it } from 'vitest'

import { type GenericSqlConfigInput, GenericSqlConfigSchema } from '../../../../connectors/generic-sql/config.ts'
import { createGenericSqlConnector } from '../../../../connectors/generic-sql/index.ts'
import { type GenericEngine, genericSourceConfig, loadGenericSqlFixture, openGenericWriter } from '../../../fixtures/generic-sql/fixture.ts'
import { ledgerRows, useCliSuite } from '../../../helpers/cli-suite.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { createMysqlTestDatabase } from '../../../helpers/mysql.ts'
import { writeRunConfig } from '../../../helpers/run-e2e.ts'

const suite = useCliSuite()

const CANARY: Record<GenericEngine, string[]> = {
  postgres: [
    'CREATE TABLE canary (id integer PRIMARY KEY)',
    'INSERT INTO canary VALUES (1), (2), (3)',
    `CREATE FUNCTION evil_delete() RETURNS integer LANGUAGE plpgsql AS $$ BEGIN DELETE FROM canary; INSERT INTO canary VALUES (99); RETURN 1; END $$`,
  ],
  mysql: [
    'CREATE TABLE canary (id integer PRIMARY KEY) ENGINE=InnoDB',
    'INSERT INTO canary VALUES (1), (2), (3)',
    'CREATE FUNCTION evil_delete() RETURNS integer MODIFIES SQL DATA BEGIN DELETE FROM canary; INSERT INTO canary VALUES (99); RETURN 1; END',
  ],
  sqlite: ['CREATE TABLE canary (id integer PRIMARY KEY)', 'INSERT INTO canary VALUES (1), (2), (3)'],
}

const USERS = 'SELECT pid AS id, full_name AS name FROM people'
const GROUPS = 'SELECT rid AS id, title AS name FROM rooms'

async function sourceUrl(engine: GenericEngine): Promise<string> {
  if (engine === 'sqlite') {
    return `sqlite:${join(mkdtempSync(join(tmpdir(), 'cf-ro-cli-')), 'legacy.db')}`
  }
  if (engine === 'postgres') {
    return (await suite.freshDb('cf_ro_src')).url
  }
  const db = await createMysqlTestDatabase('cf_ro_src')
  suite.dropAfter(db)
  return db.url
}

async function canaryIds(engine: GenericEngine, url: string): Promise<number[]> {
  const w = await openGenericWriter(engine, url)
  try {
    // The writer has no read; a read-only session reads it back.
    const { openSnapshotConnection } = await import('../../../../connectors/sql/snapshot-connection.ts')
    const conn = await openSnapshotConnection(url)
    try {
      return (await conn.query('SELECT id FROM canary ORDER BY id')).rows.map((r) => Number(r.id))
    } finally {
      await conn.close()
    }
  } finally {
    await w.close()
  }
}

/** Runs `chatferry run` over these entity queries; returns its exit code and output. */
async function runWith(url: string, entities: GenericSqlConfigInput['entities']) {
  const state = await suite.freshDb('cf_ro_state')
  const app = await suite.tsb.app({ requestsPerMinute: 6000 })
  const source = { ...genericSourceConfig(url), entities }
  const cfg = writeRunConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, source })
  const r = await runCli(['run', '--config', cfg]).done
  const password = new URL(url.startsWith('sqlite:') ? 'sqlite://x' : url).password
  if (password !== '') {
    expect(r.stdout + r.stderr).not.toContain(decodeURIComponent(password))
  }
  await suite.tsb.sandbox.whenIdle()
  return { ...r, items: (await ledgerRows(state.url)).items, requests: (await suite.tsb.sandbox.requests(app.id)).length }
}

for (const engine of ['postgres', 'mysql', 'sqlite'] as const) {
  describe.skipIf(engine === 'mysql' && inject('mysqlUrl') === undefined)(`${engine}: generic-sql queries cannot write`, () => {
    it('`) …; COMMIT; DELETE …`, a second statement, a locking read, a writable CTE, a function that writes: exit 2 naming each query, canary intact', async () => {
      const url = await sourceUrl(engine)
      await loadGenericSqlFixture(engine, url)
      const w = await openGenericWriter(engine, url)
      for (const stmt of CANARY[engine]) {
        await w.exec(stmt)
      }
      await w.close()

      const r = await runWith(url, {
        users: { query: `${USERS}) AS x; COMMIT; DELETE FROM canary; SELECT * FROM (${USERS}` },
        groups: { query: `${GROUPS}; DELETE FROM canary` },
        members: { query: `SELECT rid AS group_id, pid AS user_id FROM room_people ${engine === 'mysql' ? 'LOCK IN SHARE MODE' : 'FOR UPDATE'}` },
        messages: { query: `SELECT lid AS id, author AS sender_id FROM chat_lines /*!50000 FOR UPDATE */` },
      })
      expect(await canaryIds(engine, url)).toEqual([1, 2, 3])
      expect(r.code, r.stderr).toBe(2)
      expect(r.stderr).toMatch(
        /source\.entities\.users\.query: refused: chatferry reads the source read-only, and the query is more than one statement: .*`; COMMIT; DELETE FROM canary/,
      )
      expect(r.stderr).toMatch(/source\.entities\.users\.query: refused: .*closes a parenthesis it never opened/)
      expect(r.stderr).toMatch(/source\.entities\.groups\.query: refused: .*more than one statement: .*`; DELETE FROM canary`/)
      expect(r.stderr).toMatch(/source\.entities\.members\.query: refused: .*takes row locks \(`(LOCK IN SHARE MODE|FOR UPDATE)`\)/)
      if (engine === 'mysql') {
        // MySQL runs the text of /*! … */: a lock hidden there counts.
        expect(r.stderr).toMatch(/source\.entities\.messages\.query: refused: .*takes row locks \(`FOR UPDATE`\)/)
      }
      expect(r.items).toBe(0)
      expect(r.requests).toBe(0)

      // What the database must refuse: a writable CTE, and (Postgres, MariaDB) a function that writes.
      const cte = `WITH d AS (DELETE FROM canary RETURNING id) SELECT p.pid AS id, p.full_name AS name FROM people p`
      const writes = engine === 'sqlite' ? GROUPS : `${GROUPS} WHERE evil_delete() = 1`
      const r2 = await runWith(url, { users: { query: cte }, groups: { query: writes } })
      expect(r2.code, r2.stderr).toBe(2)
      // The query is named by its path and its start (80 characters).
      expect(r2.stderr).toMatch(
        engine === 'postgres'
          ? /source\.entities\.users\.query \(`WITH d AS \(DELETE FROM canary RETURNING id\) SELECT p\.pid AS id, p\.full_name AS …`\): checking the users query refused: chatferry reads the source read-only, and the statement tries to write.*: WITH clause containing a data-modifying statement/
          : // MariaDB and SQLite have no writable CTE: a syntax error, named all the same.
            /source\.entities\.users\.query \(`WITH d AS \(DELETE FROM canary RETURNING id\) SELECT p\.pid AS id, p\.full_name AS …`\): checking the users query failed on the source database .*(syntax)/,
      )
      if (engine === 'mysql') {
        // MariaDB refuses the function's write when the query is checked: both entities at once.
        expect(r2.stderr).toMatch(/2 problems in source\.entities/)
        expect(r2.stderr).toMatch(
          /source\.entities\.groups\.query \(`SELECT rid AS id, title AS name FROM rooms WHERE evil_delete\(\) = 1`\): checking the groups query refused: chatferry reads the source read-only/,
        )
      }
      expect(r2.items).toBe(0)
      expect(await canaryIds(engine, url)).toEqual([1, 2, 3])

      if (engine === 'postgres') {
        // Postgres calls the function on the first row it reads: the read stops there.
        const r3 = await runWith(url, { users: { query: USERS }, groups: { query: writes } })
        expect(r3.code, r3.stderr).toBe(2)
        expect(r3.stderr).toMatch(
          /source\.entities\.groups\.query \(`SELECT rid AS id, title AS name FROM rooms WHERE evil_delete\(\) = 1`\): .* refused: chatferry reads the source read-only, and the statement tries to write.*: cannot execute DELETE in a read-only transaction .*\[CONFIG_INVALID\]/,
        )
        expect(r3.requests).toBe(0)
        expect(await canaryIds(engine, url)).toEqual([1, 2, 3])
      }
    }, 120_000)
  })
}

it('a query ending in a `-- comment` or `;` still reads: the wrapper closes on a line of its own', async () => {
  const url = await sourceUrl('sqlite')
  await loadGenericSqlFixture('sqlite', url)
  const config = GenericSqlConfigSchema.parse({
    connector: 'generic-sql',
    url,
    entities: { users: { query: `${USERS} -- every person` }, groups: { query: `${GROUPS} ;` } },
  })
  const session = await createGenericSqlConnector(config).open()
  try {
    expect(await session.count('users')).toBeGreaterThan(0)
    expect(await session.count('groups')).toBeGreaterThan(0)
  } finally {
    await session.close()
  }
})
