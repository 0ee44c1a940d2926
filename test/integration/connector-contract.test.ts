/**
 * The connector contract: one suite, run against every connector × database (generic-sql on
 * Postgres, MariaDB and SQLite; mattermost on Postgres and MariaDB). Expectations come from the
 * fixtures' seed rows (test/fixtures/<system>/expected.ts), never from connector output.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import { createConnector, type SourceConfigInput, SourceConfigSchema } from '../../connectors/index.ts'
import { ChatferryError } from '../../src/errors.ts'
import type { Cursor, Page, ReadOptions, SourceConnector, SourceSession } from '../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../src/model/records.ts'
import type { ExpectedRow, ExpectedRows } from '../fixtures/expected-row.ts'
import { expectedGeneric } from '../fixtures/generic-sql/expected.ts'
import {
  G0,
  type GenericEngine,
  genericSeed,
  genericSourceConfig,
  loadGenericSqlFixture,
  openGenericWriter,
  sqlTime,
} from '../fixtures/generic-sql/fixture.ts'
import { expectedMattermost } from '../fixtures/mattermost/expected.ts'
import { loadMattermostFixture, MINUTE, MM, openFixtureWriter, T0 } from '../fixtures/mattermost/load.ts'
import { createTestDatabase } from '../helpers/db.ts'
import { createMysqlTestDatabase } from '../helpers/mysql.ts'

type Engine = GenericEngine
type ConnectorName = 'generic-sql' | 'mattermost'

/** What one connector × database gives the shared suite. */
interface Env {
  readonly url: string
  readonly engine: Engine
  /** The source config for this fixture, with overrides. */
  config(overrides?: Record<string, unknown>): SourceConfigInput
  expected(since?: number): ExpectedRows
  /** A delta watermark that splits the fixture's change times. */
  readonly deltaSince: number
  /** Inserts one message (and returns its id) through another connection. */
  insertMessage(): Promise<string>
  removeMessage(id: string): Promise<void>
  /** Source connections open on the server for this database (undefined: not observable). */
  openConnections(): Promise<number | undefined>
  readonly unreachableUrl: string
  /** A config whose messages query lacks a required column, and that column. */
  readonly missingColumn?: { readonly config: SourceConfigInput; readonly column: string }
  drop(): Promise<void>
}

const PASSWORD = 'S3cretPassw0rd'

async function createDatabase(engine: Engine): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (engine === 'postgres') {
    return createTestDatabase('cf_conn')
  }
  if (engine === 'mysql') {
    return createMysqlTestDatabase('cf_conn')
  }
  const dir = mkdtempSync(join(tmpdir(), 'cf-conn-'))
  return { url: `sqlite:${join(dir, 'source.db')}`, name: 'source.db', drop: async () => rmSync(dir, { recursive: true, force: true }) }
}

async function countConnections(engine: Engine, dbName: string): Promise<number | undefined> {
  if (engine === 'postgres') {
    const c = new pg.Client({ connectionString: inject('postgresUrl') })
    await c.connect()
    try {
      const r = await c.query<{ n: string }>(
        "SELECT count(*) AS n FROM pg_stat_activity WHERE datname = $1 AND application_name = 'chatferry-source'",
        [dbName],
      )
      return Number(r.rows[0]?.n)
    } finally {
      await c.end()
    }
  }
  if (engine === 'mysql') {
    const mysql = await import('mysql2/promise')
    const c = await mysql.createConnection({ uri: inject('mysqlUrl') as string })
    try {
      const [rows] = await c.query('SELECT count(*) AS n FROM information_schema.processlist WHERE db = ?', [dbName])
      return Number((rows as { n: number }[])[0]?.n)
    } finally {
      await c.end()
    }
  }
  return undefined
}

function unreachable(engine: Engine): string {
  if (engine === 'postgres') {
    return `postgres://chatferry:${PASSWORD}@127.0.0.1:1/legacy`
  }
  if (engine === 'mysql') {
    return `mysql://chatferry:${PASSWORD}@127.0.0.1:1/legacy`
  }
  return `sqlite:/nonexistent-${PASSWORD}-dir/legacy.db`
}

async function genericEnv(engine: Engine): Promise<Env> {
  const db = await createDatabase(engine)
  const seed = await loadGenericSqlFixture(engine, db.url, genericSeed(engine))
  const base = genericSourceConfig(db.url)
  const broken = structuredClone(base) as { entities: { messages: { query: string } } }
  broken.entities.messages.query = "SELECT lid AS id, author AS sender_id, room AS receiver_id, 'group' AS receiver_type FROM chat_lines"
  let next = 1000
  return {
    url: db.url,
    engine,
    config: (o = {}) => ({ ...base, ...o }) as SourceConfigInput,
    expected: (since) => expectedGeneric(seed, since),
    deltaSince: G0 + 30 * MINUTE,
    async insertMessage() {
      const id = next++
      const w = await openGenericWriter(engine, db.url)
      try {
        await w.insert('chat_lines', [
          {
            lid: id,
            author: 1,
            room: 'r-general',
            to_pid: null,
            body: 'inserted mid-read',
            kind: 'text',
            posted: sqlTime(G0 + 2 * MINUTE),
            modified: sqlTime(G0 + 2 * MINUTE),
          },
        ])
      } finally {
        await w.close()
      }
      return String(id)
    },
    async removeMessage(id) {
      const w = await openGenericWriter(engine, db.url)
      try {
        await w.exec(`DELETE FROM chat_lines WHERE lid = ${Number(id)}`)
      } finally {
        await w.close()
      }
    },
    openConnections: () => countConnections(engine, db.name),
    unreachableUrl: unreachable(engine),
    missingColumn: { config: broken as SourceConfigInput, column: 'sent_at' },
    drop: () => db.drop(),
  }
}

async function mattermostEnv(engine: 'postgres' | 'mysql'): Promise<Env> {
  const db = await createDatabase(engine)
  const seed = await loadMattermostFixture(engine, db.url)
  const groupName = '{team}-{channel}'
  const fileBaseUrl = 'https://files.example.com/mm'
  let next = 1
  return {
    url: db.url,
    engine,
    config: (o = {}) => ({ connector: 'mattermost', url: db.url, groupName, fileBaseUrl, ...o }) as SourceConfigInput,
    expected: (since) => expectedMattermost(seed, { groupName, fileBaseUrl, ...(since === undefined ? {} : { since }) }),
    deltaSince: T0 + 40 * MINUTE,
    async insertMessage() {
      const id = `p90inserted${next++}`
      const w = await openFixtureWriter(engine, db.url)
      try {
        await w.insert('posts', [
          {
            id,
            createat: T0 + 2 * MINUTE,
            updateat: T0 + 2 * MINUTE,
            editat: 0,
            deleteat: 0,
            userid: MM.alice,
            channelid: MM.town,
            rootid: '',
            originalid: '',
            message: 'inserted mid-read',
            type: '',
            props: '{}',
            fileids: '[]',
          },
        ])
      } finally {
        await w.close()
      }
      return id
    },
    async removeMessage(id) {
      const w = await openFixtureWriter(engine, db.url)
      try {
        await w.exec(engine === 'postgres' ? `DELETE FROM posts WHERE id = '${id}'` : `DELETE FROM Posts WHERE Id = '${id}'`)
      } finally {
        await w.close()
      }
    },
    openConnections: () => countConnections(engine, db.name),
    unreachableUrl: unreachable(engine),
    drop: () => db.drop(),
  }
}

/** A read row as the suite compares it: records whole, problems by legacy id and field. */
function comparable<E extends LegacyEntity>(entity: E, row: Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>) {
  return row.ok ? { ok: true, record: row.record } : { ok: false, legacyId: row.legacyId, field: row.field }
}
function idOf<E extends LegacyEntity>(entity: E, row: Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>): string {
  return row.ok ? legacyIdOf(entity, row.record) : row.legacyId
}
function sortById<E extends LegacyEntity, R extends Page<LegacyRecordOf[E]>['rows'][number] | ExpectedRow<E>>(entity: E, rows: R[]): R[] {
  return [...rows].sort((a, b) => (idOf(entity, a) < idOf(entity, b) ? -1 : idOf(entity, a) > idOf(entity, b) ? 1 : 0))
}

async function readAll<E extends LegacyEntity>(session: SourceSession, entity: E, options: ReadOptions = {}) {
  const pages: Page<LegacyRecordOf[E]>[] = []
  for await (const page of session.read(entity, options)) {
    pages.push(page)
  }
  return { pages, rows: pages.flatMap((p) => p.rows) }
}

const CASES: readonly { connector: ConnectorName; engine: Engine }[] = [
  { connector: 'generic-sql', engine: 'postgres' },
  { connector: 'generic-sql', engine: 'mysql' },
  { connector: 'generic-sql', engine: 'sqlite' },
  { connector: 'mattermost', engine: 'postgres' },
  { connector: 'mattermost', engine: 'mysql' },
]

const noMysql = inject('mysqlUrl') === undefined

for (const { connector, engine } of CASES) {
  const skip = engine === 'mysql' && noMysql
  const title = `${connector} × ${engine === 'mysql' ? 'MariaDB/MySQL' : engine}${skip ? ' (skipped: no MySQL/MariaDB server — set TEST_MYSQL_URL or start MariaDB on 127.0.0.1:3306)' : ''}`

  describe.skipIf(skip)(title, () => {
    let env: Env
    let source: SourceConnector

    beforeAll(async () => {
      env = connector === 'generic-sql' ? await genericEnv(engine) : await mattermostEnv(engine as 'postgres' | 'mysql')
      source = createConnector(SourceConfigSchema.parse(env.config()))
    })
    afterAll(async () => {
      await env?.drop()
    })

    async function withSession<T>(fn: (s: SourceSession) => Promise<T>, c: SourceConnector = source): Promise<T> {
      const s = await c.open()
      try {
        return await fn(s)
      } finally {
        await s.close()
      }
    }

    it('counts every entity as the fixture predicts', async () => {
      await withSession(async (s) => {
        const expected = env.expected()
        for (const e of LEGACY_ENTITIES) {
          expect({ e, n: await s.count(e) }).toEqual({ e, n: expected[e].length })
        }
      })
    })

    for (const entity of LEGACY_ENTITIES) {
      it(`maps every ${entity} row as documented (records and problems derived from the seed)`, async () => {
        await withSession(async (s) => {
          const { rows } = await readAll(s, entity)
          const got = sortById(entity, rows).map((r) => comparable(entity, r))
          const want = sortById(entity, env.expected()[entity] as ExpectedRow<typeof entity>[]).map((r) => comparable(entity, r))
          expect(got).toEqual(want)
        })
      })
    }

    it('reports bad rows as RowProblems with legacy id and field, and reads on past them', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const { rows } = await readAll(s, entity, { pageSize: 3 })
          const problems = rows.filter((r) => !r.ok)
          const wantProblems = env.expected()[entity].filter((r) => !r.ok)
          expect(problems.map((p) => (p.ok ? '' : `${p.legacyId}:${p.field}`)).sort()).toEqual(
            wantProblems.map((p) => (p.ok ? '' : `${p.legacyId}:${p.field}`)).sort(),
          )
          for (const p of problems) {
            if (!p.ok) {
              expect(p.reason.length).toBeGreaterThan(0)
            }
          }
          expect(rows.length).toBe(env.expected()[entity].length)
        }
        const messageProblems = env.expected().messages.filter((r) => !r.ok).length
        expect(messageProblems).toBeGreaterThanOrEqual(connector === 'mattermost' ? 4 : 1)
      })
    })

    it('pages across boundaries with duplicate timestamps: same rows, in order, none twice', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const whole = (await readAll(s, entity)).rows.map((r) => idOf(entity, r))
          for (const pageSize of [1, 2, 3]) {
            const { pages, rows } = await readAll(s, entity, { pageSize })
            for (const p of pages) {
              expect(p.rows.length).toBeLessThanOrEqual(pageSize)
            }
            const ids = rows.map((r) => idOf(entity, r))
            expect(ids).toEqual(whole)
            expect(new Set(ids).size).toBe(ids.length)
          }
        }
        // The fixture really has ties in the message key's time column.
        const sent = (await readAll(s, 'messages')).rows.flatMap((r) => (r.ok ? [r.record.sentAt] : []))
        expect(sent.length - new Set(sent).size).toBeGreaterThanOrEqual(2)
      })
    })

    it('resumes from a cursor taken mid-table with exactly the remaining rows', async () => {
      await withSession(async (s) => {
        for (const entity of LEGACY_ENTITIES) {
          const { pages } = await readAll(s, entity, { pageSize: 2 })
          if (pages.length < 2) {
            continue
          }
          const cursor = JSON.parse(JSON.stringify((pages[1] as Page<unknown>).cursor)) as Cursor
          const rest = await readAll(s, entity, { pageSize: 2, after: cursor })
          expect(rest.rows.map((r) => idOf(entity, r))).toEqual(pages.slice(2).flatMap((p) => p.rows.map((r) => idOf(entity, r))))
        }
      })
      // …also in a new session (a resumed run).
      const first = await withSession(async (s) => (await readAll(s, 'messages', { pageSize: 4 })).pages)
      const rest = await withSession((s) => readAll(s, 'messages', { pageSize: 4, after: (first[0] as Page<unknown>).cursor }))
      expect(rest.rows.map((r) => idOf('messages', r))).toEqual(first.slice(1).flatMap((p) => p.rows.map((r) => idOf('messages', r))))
    })

    it('readKeys: the legacy id of every record, keys only, in pages of any size, from its own snapshot', async () => {
      const keysOf = async (s: SourceSession, entity: LegacyEntity, pageSize?: number) => {
        const keys: string[] = []
        for await (const page of (s.readKeys as NonNullable<SourceSession['readKeys']>)(entity, pageSize ? { pageSize } : {}) ?? []) {
          keys.push(...page)
        }
        return keys
      }
      await withSession(async (s) => {
        expect(s.readKeys).toBeTypeOf('function')
        for (const entity of LEGACY_ENTITIES) {
          const records = (await readAll(s, entity)).rows.flatMap((r) => (r.ok ? [legacyIdOf(entity, r.record)] : []))
          expect(records.length, entity).toBeGreaterThan(0)
          for (const pageSize of [1, 2, undefined]) {
            const keys = new Set(await keysOf(s, entity, pageSize))
            expect(
              records.filter((id) => !keys.has(id)),
              `${entity} records missing from the keys (pageSize ${pageSize})`,
            ).toEqual([])
          }
        }
      })
      // A removed row is gone from a later snapshot's keys; a snapshot taken before still has it.
      const id = await env.insertMessage()
      const before = await source.open()
      try {
        expect(await keysOf(before, 'messages')).toContain(id)
        await env.removeMessage(id)
        expect(await keysOf(before, 'messages')).toContain(id)
      } finally {
        await before.close()
      }
      expect(await withSession((s) => keysOf(s, 'messages'))).not.toContain(id)
    })

    it('reads one snapshot: rows inserted by another connection during the read are not seen', async () => {
      let inserted: string | undefined
      try {
        await withSession(async (s) => {
          const before = await s.count('messages')
          const seen: string[] = []
          for await (const page of s.read('messages', { pageSize: 2 })) {
            if (inserted === undefined) {
              inserted = await env.insertMessage()
            }
            seen.push(...page.rows.map((r) => idOf('messages', r)))
          }
          expect(seen).not.toContain(inserted)
          expect(seen.length).toBe(before)
          expect(await s.count('messages')).toBe(before)
        })
        // A new snapshot sees it.
        await withSession(async (s) => {
          const { rows } = await readAll(s, 'messages')
          expect(rows.map((r) => idOf('messages', r))).toContain(inserted)
        })
      } finally {
        if (inserted !== undefined) {
          await env.removeMessage(inserted)
        }
      }
    })

    it('releases the connection when the consumer breaks out, and on close', async () => {
      const s = await source.open()
      try {
        expect(await env.openConnections()).not.toBe(0)
        for await (const page of s.read('messages', { pageSize: 2 })) {
          expect(page.rows.length).toBe(2)
          break
        }
        // The session is idle again: another read runs to completion at once.
        const { rows } = await readAll(s, 'users')
        expect(rows.length).toBe(env.expected().users.length)
        const ac = new AbortController()
        const aborted = (async () => {
          for await (const _ of s.read('messages', { pageSize: 1, signal: ac.signal })) {
            ac.abort()
          }
        })()
        await expect(aborted).rejects.toThrow()
        expect((await readAll(s, 'groups')).rows.length).toBe(env.expected().groups.length)
      } finally {
        await s.close()
        await s.close() // idempotent
      }
      // The server drops a closed session's thread asynchronously (MariaDB lists it in its
      // processlist for a moment after COM_QUIT), so wait for the count to settle before judging.
      let open = await env.openConnections()
      for (let i = 0; i < 50 && open !== undefined && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        open = await env.openConnections()
      }
      if (open !== undefined) {
        expect(open).toBe(0)
      }
    })

    it('delta mode returns only rows changed at or after the watermark', async () => {
      await withSession(async (s) => {
        const since = env.deltaSince
        const want = env.expected(since)
        let total = 0
        for (const entity of LEGACY_ENTITIES) {
          const { rows, pages } = await readAll(s, entity, { since, pageSize: 2 })
          expect(rows.map((r) => idOf(entity, r)).sort()).toEqual(want[entity].map((r) => idOf(entity, r)).sort())
          expect(await s.count(entity, { since })).toBe(want[entity].length)
          total += rows.length
          const last = pages.at(-1)
          if (last?.watermark !== undefined) {
            expect(last.watermark).toBeGreaterThanOrEqual(since)
          }
        }
        expect(total).toBeGreaterThan(0)
        expect(total).toBeLessThan(LEGACY_ENTITIES.reduce((n, e) => n + env.expected()[e].length, 0))
      })
    })

    it('fails with SOURCE_UNAVAILABLE naming the source but never its password when unreachable', async () => {
      const c = createConnector(SourceConfigSchema.parse(env.config({ url: env.unreachableUrl, connectTimeoutMs: 2000 })))
      const err = await c.open().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('SOURCE_UNAVAILABLE')
      const text = `${(err as Error).message} ${String((err as Error).stack)}`
      if (engine === 'sqlite') {
        expect((err as Error).message).toContain('legacy.db')
      } else {
        expect((err as Error).message).toContain('127.0.0.1:1')
        expect(text).not.toContain(PASSWORD)
      }
    })

    it.skipIf(connector !== 'generic-sql')('fails before reading any row when a query lacks a required column, naming it', async () => {
      const missing = env.missingColumn
      if (missing === undefined) {
        return
      }
      const c = createConnector(SourceConfigSchema.parse(missing.config))
      const err = await c.open().then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(err).toBeInstanceOf(ChatferryError)
      expect((err as ChatferryError).code).toBe('CONFIG_INVALID')
      expect((err as Error).message).toContain(`\`${missing.column}\``)
      expect((err as Error).message).toContain('messages')
      // And the connection it opened is gone.
      // The server drops a closed session's thread asynchronously (MariaDB lists it in its
      // processlist for a moment after COM_QUIT), so wait for the count to settle before judging.
      let open = await env.openConnections()
      for (let i = 0; i < 50 && open !== undefined && open > 0; i++) {
        await new Promise((r) => setTimeout(r, 100))
        open = await env.openConnections()
      }
      if (open !== undefined) {
        expect(open).toBe(0)
      }
    })
  })
}
