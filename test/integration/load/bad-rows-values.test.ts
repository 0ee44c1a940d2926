/**
 * The bad-value catalogue, on Postgres, MariaDB and SQLite sources through the generic-sql
 * connector: U+0000 in text and JSON columns (keys and values), unpaired surrogates in JSON,
 * invalid UTF-8, huge texts, impossible timestamps (year 275760+, before 1970, negative, NaN,
 * infinity). For each engine:
 * - every row is a record or a problem (`records + problems = SELECT count(*)`), each problem with
 *   its field and reason;
 * - `plan`, `run` into the sandbox and `verify` finish without crashing, what could be stored is
 *   on the platform without the characters it cannot store, and every bad row is rejected in the
 *   ledger with its field;
 * - `verify` still finishes when the ledger holds such a value written by an older version.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import { createConnector, type SourceConfigInput, SourceConfigSchema } from '../../../connectors/index.ts'
import type { RowProblem } from '../../../src/model/connector.ts'
import { type LegacyEntity, legacyIdOf, type LegacyMessage, type LegacyUser } from '../../../src/model/records.ts'
import { VerifyReport } from '../../../src/report/schema.ts'
import { hasUnstorable } from '../../../src/target/characters.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { createMysqlTestDatabase } from '../../helpers/mysql.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

type Engine = 'postgres' | 'mysql' | 'sqlite'

/** A value to insert: plain, or SQL around its placeholder (SQLite text holding invalid UTF-8). */
type Cell = string | number | null | Uint8Array | { readonly sqlite: string; readonly value: Uint8Array }

interface CatalogueRow {
  readonly id: number
  readonly what: string
  readonly cells: (engine: Engine) => Record<string, Cell>
  /** Engines that can hold the value (default: all three). */
  readonly engines?: readonly Engine[]
  /** The connector's problem: field and reason. */
  readonly problem?: { readonly field: string; readonly reason: RegExp }
  /** A mapping rejection (the field the ledger's message starts with). */
  readonly rejected?: string
}

const POSTED = '2024-03-01 12:00:00'
const JOINED = 1_700_000_000
const ALL: readonly Engine[] = ['postgres', 'mysql', 'sqlite']

/** Text in the body column: bytea (Postgres) and blob (MariaDB) hold any bytes; SQLite text. */
function body(engine: Engine, text: string): Cell {
  return engine === 'sqlite' ? text : Buffer.from(text, 'utf8')
}
function invalidUtf8(engine: Engine): Cell {
  const bytes = new Uint8Array([0x48, 0x69, 0xff, 0xfe, 0x21])
  return engine === 'sqlite' ? { sqlite: 'CAST(? AS TEXT)', value: bytes } : bytes
}

const PEOPLE: readonly CatalogueRow[] = [
  { id: 1, what: 'a good user', cells: () => ({ full_name: 'Ada', meta: '{"team":"a"}', joined_s: JOINED }) },
  { id: 2, what: 'a good receiver', cells: () => ({ full_name: 'Bob', meta: null, joined_s: JOINED }) },
  { id: 3, what: 'U+0000 in a name', engines: ['mysql', 'sqlite'], cells: () => ({ full_name: 'Nu\u0000ll', meta: null, joined_s: JOINED }) },
  {
    id: 4,
    what: 'U+0000 in JSON keys and values, nested',
    cells: () => ({ full_name: 'Json', meta: '{"k\\u0000ey":"v\\u0000al","nested":{"x":["\\u0000"]}}', joined_s: JOINED }),
  },
  // MariaDB's json type refuses an escaped unpaired surrogate (its posts.extra is longtext: see row 11 there).
  {
    id: 5,
    what: 'an unpaired surrogate in JSON',
    engines: ['sqlite'],
    cells: () => ({ full_name: 'Half', meta: '{"s":"\\ud800x"}', joined_s: JOINED }),
  },
  {
    id: 6,
    what: 'a negative epoch',
    cells: () => ({ full_name: 'Neg', meta: null, joined_s: -1 }),
    problem: { field: 'created_at', reason: /outside 1970-01-01\.\.9999-12-31/ },
  },
  {
    id: 7,
    what: 'an epoch beyond year 275760',
    cells: () => ({ full_name: 'Far', meta: null, joined_s: 1e16 }),
    problem: { field: 'created_at', reason: /outside 1970-01-01\.\.9999-12-31/ },
  },
  {
    id: 8,
    what: 'a NaN epoch',
    engines: ['postgres'],
    cells: () => ({ full_name: 'NaN', meta: null, joined_s: 'NaN' }),
    problem: { field: 'created_at', reason: /outside 1970-01-01\.\.9999-12-31/ },
  },
  { id: 9, what: 'a huge name', cells: () => ({ full_name: 'N'.repeat(5000), meta: null, joined_s: JOINED }) },
]

const LINES: readonly CatalogueRow[] = [
  { id: 1, what: 'a good message', cells: (e) => ({ to_pid: '2', body: body(e, 'hello'), extra: null, posted: POSTED }) },
  { id: 2, what: 'U+0000 in text', cells: (e) => ({ to_pid: '2', body: body(e, 'nul\u0000here'), extra: null, posted: POSTED }) },
  {
    id: 3,
    what: 'invalid UTF-8 in text',
    cells: (e) => ({ to_pid: '2', body: invalidUtf8(e), extra: null, posted: POSTED }),
    problem: { field: 'text', reason: /^invalid UTF-8 in the text$/ },
  },
  {
    id: 4,
    what: 'a text too huge to split',
    cells: (e) => ({ to_pid: '2', body: body(e, 'a'.repeat(1_000_000)), extra: null, posted: POSTED }),
    rejected: 'text',
  },
  { id: 5, what: 'a huge text that splits', cells: (e) => ({ to_pid: '2', body: body(e, 'word '.repeat(6000)), extra: null, posted: POSTED }) },
  {
    id: 6,
    what: 'a date beyond year 275760',
    cells: (e) => ({ to_pid: '2', body: body(e, 'far'), extra: null, posted: '275760-09-14 00:00:00' }),
    problem: { field: 'sent_at', reason: /^invalid timestamp "275760-09-14 00:00:00"$/ },
  },
  {
    id: 7,
    what: 'a date before 1970',
    cells: (e) => ({ to_pid: '2', body: body(e, 'old'), extra: null, posted: '1969-12-31 23:59:59' }),
    problem: { field: 'sent_at', reason: /outside 1970-01-01\.\.9999-12-31/ },
  },
  {
    id: 8,
    what: 'U+0000 in a referenced id',
    engines: ['mysql', 'sqlite'],
    cells: (e) => ({ to_pid: '2\u0000', body: body(e, 'to whom'), extra: null, posted: POSTED }),
    problem: { field: 'receiver_id', reason: /^legacy id contains U\+0000 at position 1$/ },
  },
  {
    id: 9,
    what: 'U+0000 in JSON metadata',
    cells: (e) => ({ to_pid: '2', body: body(e, 'meta'), extra: '{"k\\u0000":"v\\u0000"}', posted: POSTED }),
  },
  {
    id: 10,
    what: 'infinity as a date',
    engines: ['postgres'],
    cells: (e) => ({ to_pid: '2', body: body(e, 'forever'), extra: null, posted: 'infinity' }),
    problem: { field: 'sent_at', reason: /^invalid timestamp "infinity"$/ },
  },
  {
    id: 11,
    what: 'an unpaired surrogate in JSON metadata',
    engines: ['mysql', 'sqlite'],
    cells: (e) => ({ to_pid: '2', body: body(e, 'half'), extra: '{"a":"\\udc00"}', posted: POSTED }),
  },
]

const rowsFor = (engine: Engine, rows: readonly CatalogueRow[]) => rows.filter((r) => (r.engines ?? ALL).includes(engine))

const SCHEMA: Record<Engine, string[]> = {
  postgres: [
    'CREATE TABLE people (pid integer PRIMARY KEY, full_name text, meta json, joined_s double precision)',
    'CREATE TABLE posts (lid integer PRIMARY KEY, author integer, to_pid varchar(40), body bytea, extra json, posted varchar(40))',
  ],
  mysql: [
    'CREATE TABLE people (pid int PRIMARY KEY, full_name longtext, meta json, joined_s double) DEFAULT CHARSET=utf8mb4',
    'CREATE TABLE posts (lid int PRIMARY KEY, author int, to_pid varchar(40), body longblob, extra longtext, posted varchar(40)) DEFAULT CHARSET=utf8mb4',
  ],
  sqlite: [
    'CREATE TABLE people (pid INTEGER PRIMARY KEY, full_name TEXT, meta TEXT, joined_s REAL)',
    'CREATE TABLE posts (lid INTEGER PRIMARY KEY, author INTEGER, to_pid TEXT, body TEXT, extra TEXT, posted TEXT)',
  ],
}

function sourceConfig(url: string): SourceConfigInput {
  return {
    connector: 'generic-sql',
    url,
    pageSize: 3,
    entities: {
      users: { query: 'SELECT pid AS id, full_name AS name, meta AS metadata, joined_s AS created_at FROM people', timeFormat: 'epoch-s' },
      messages: {
        query: `SELECT lid AS id, author AS sender_id, 'user' AS receiver_type, to_pid AS receiver_id, body AS text,
                  extra AS metadata, posted AS sent_at FROM posts`,
        keys: ['id'],
      },
    },
  } as SourceConfigInput
}

/** Creates the schema and inserts the catalogue with the engine's own client; returns `SELECT count(*)` per table. */
async function seed(engine: Engine, url: string): Promise<{ people: number; posts: number }> {
  const tables = {
    people: rowsFor(engine, PEOPLE).map((r) => ({ pid: r.id, ...r.cells(engine) })),
    posts: rowsFor(engine, LINES).map((r) => ({ lid: r.id, author: 1, ...r.cells(engine) })),
  }
  const count = { people: 0, posts: 0 }
  if (engine === 'postgres') {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      for (const s of SCHEMA.postgres) {
        await c.query(s)
      }
      for (const [table, rows] of Object.entries(tables)) {
        for (const row of rows) {
          const cols = Object.keys(row)
          await c.query(
            `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
            cols.map((k) => (row as Record<string, Cell>)[k]),
          )
        }
        count[table as keyof typeof count] = Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n)
      }
    } finally {
      await c.end()
    }
  } else if (engine === 'mysql') {
    const mysql = await import('mysql2/promise')
    const c = await mysql.createConnection({ uri: url.replace(/^mariadb:/, 'mysql:'), charset: 'utf8mb4' })
    try {
      for (const s of SCHEMA.mysql) {
        await c.query(s)
      }
      for (const [table, rows] of Object.entries(tables)) {
        for (const row of rows) {
          const cols = Object.keys(row)
          await c.query(
            `INSERT INTO ${table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`,
            cols.map((k) => (row as Record<string, Cell>)[k]),
          )
        }
        const [n] = await c.query(`SELECT count(*) AS n FROM ${table}`)
        count[table as keyof typeof count] = Number((n as { n: number }[])[0]?.n)
      }
    } finally {
      await c.end()
    }
  } else {
    const db = new DatabaseSync(url.replace(/^sqlite:/, ''))
    try {
      for (const s of SCHEMA.sqlite) {
        db.exec(s)
      }
      for (const [table, rows] of Object.entries(tables)) {
        for (const row of rows) {
          const cols = Object.keys(row)
          const cells = cols.map((k) => (row as Record<string, Cell>)[k] as Cell)
          const marks = cells.map((v) => (v !== null && typeof v === 'object' && 'sqlite' in v ? v.sqlite : '?'))
          const params = cells.map((v) => (v !== null && typeof v === 'object' && 'sqlite' in v ? v.value : v))
          db.prepare(`INSERT INTO ${table} (${cols.join(', ')}) VALUES (${marks.join(', ')})`).run(
            ...(params as (string | number | null | Uint8Array)[]),
          )
        }
        count[table as keyof typeof count] = Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)
      }
    } finally {
      db.close()
    }
  }
  return count
}

async function createSource(engine: Engine): Promise<TestDatabase> {
  if (engine === 'postgres') {
    return createTestDatabase('cf_badval_src')
  }
  if (engine === 'mysql') {
    return createMysqlTestDatabase('cf_badval')
  }
  const dir = mkdtempSync(join(tmpdir(), 'cf-badval-'))
  return { url: `sqlite:${join(dir, 'legacy.db')}`, name: 'legacy.db', drop: async () => rmSync(dir, { recursive: true, force: true }) }
}

let tsb: TestSandbox
beforeAll(async () => {
  tsb = await startTestSandbox()
})
afterAll(async () => {
  await tsb?.close()
})

const noMysql = inject('mysqlUrl') === undefined

for (const engine of ALL) {
  const skip = engine === 'mysql' && noMysql
  describe.skipIf(skip)(`bad values × generic-sql on ${engine}`, () => {
    let source: TestDatabase
    let state: TestDatabase
    let counts: { people: number; posts: number }
    let cfg: string

    beforeAll(async () => {
      source = await createSource(engine)
      state = await createTestDatabase('cf_badval_state')
      counts = await seed(engine, source.url)
      const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
      cfg = writeRunConfig({
        appId: app.id,
        apiKey: app.apiKey,
        baseUrl: app.baseUrl,
        stateUrl: state.url,
        source: sourceConfig(source.url) as unknown as Record<string, unknown>,
        policies: { retention: { oldMessages: 'send' } },
        load: { quotaWindowMs: 10_000 },
      })
    })
    afterAll(async () => {
      await state?.drop()
      await source?.drop()
    })

    it.each([
      ['users', 'people'],
      ['messages', 'posts'],
    ] as const)('%s: records + problems = rows, each problem with its field and reason', async (entity, table) => {
      const session = await createConnector(SourceConfigSchema.parse(sourceConfig(source.url))).open()
      const records: unknown[] = []
      const problems: RowProblem[] = []
      try {
        for await (const page of session.read(entity as LegacyEntity)) {
          for (const row of page.rows) {
            if (row.ok) {
              records.push(row.record)
            } else {
              problems.push(row)
            }
          }
        }
      } finally {
        await session.close()
      }
      expect(records.length + problems.length).toBe(counts[table])
      const catalogue = rowsFor(engine, entity === 'users' ? PEOPLE : LINES)
      const expected = catalogue.filter((r) => r.problem !== undefined)
      expect(problems.map((p) => p.legacyId).sort()).toEqual(expected.map((r) => String(r.id)).sort())
      for (const row of expected) {
        const p = problems.find((x) => x.legacyId === String(row.id))
        expect({ what: row.what, field: p?.field }).toEqual({ what: row.what, field: row.problem?.field })
        expect(p?.reason, row.what).toMatch(row.problem?.reason as RegExp)
      }
      // What decodes carries the bad characters on to the mappings (which apply the text policy).
      const ids = records.map((r) => legacyIdOf(entity, r as LegacyUser & LegacyMessage))
      expect(ids.sort()).toEqual(
        catalogue
          .filter((r) => r.problem === undefined)
          .map((r) => String(r.id))
          .sort(),
      )
    })

    it('plan, run into the sandbox and verify finish; stored values hold no unstorable character', async () => {
      const out = mkdtempSync(join(tmpdir(), 'cf-badval-out-'))
      const plan = await runCli(['plan', '--config', cfg, '--out', out], { CHATFERRY_LOG_LEVEL: 'error' }).done
      expect(plan.code, plan.stderr.slice(-2000)).toBe(0)
      const report = JSON.parse(readFileSync(join(out, 'plan-report.json'), 'utf8')) as {
        entities: Record<string, { outcomes: Record<string, { count: number }> }>
      }
      const stripped = (e: string, field: string) => report.entities[e]?.outcomes[`text: stripped:${field}`]?.count ?? 0
      expect(stripped('users', 'name')).toBe(engine === 'postgres' ? 0 : 1)
      expect(stripped('users', 'metadata')).toBe(engine === 'sqlite' ? 2 : 1)
      expect(stripped('messages', 'text')).toBe(1)
      expect(stripped('messages', 'metadata')).toBe(engine === 'postgres' ? 1 : 2)

      const run = await runCli(['run', '--config', cfg], { CHATFERRY_LOG_LEVEL: 'error' }).done
      expect(run.code, run.stderr.slice(-2000)).toBe(3)

      const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as {
        entity: string
        legacyId: string
        message: string
      }[]
      const want = [
        ...rowsFor(engine, PEOPLE)
          .filter((r) => r.problem || r.rejected)
          .map((r) => ({ entity: 'users', legacyId: String(r.id), field: r.problem?.field ?? r.rejected })),
        ...rowsFor(engine, LINES)
          .filter((r) => r.problem || r.rejected)
          .map((r) => ({ entity: 'messages', legacyId: String(r.id), field: r.problem?.field ?? r.rejected })),
      ]
      expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual(want.map((w) => `${w.entity} ${w.legacyId}`).sort())
      for (const w of want) {
        expect(rejects.find((r) => r.entity === w.entity && r.legacyId === w.legacyId)?.message).toMatch(new RegExp(`^${w.field}: `))
      }

      // On the platform: the texts without the characters, nothing unstorable anywhere.
      const users = await sql<{
        uid: string
        name: string
        metadata: unknown
      }>`select uid, name, metadata from sandbox.users where app_id = ${appIdOf(cfg)}`.execute(tsb.sandbox.store)
      const messages = await sql<{
        muid: string
        data: { text?: string; metadata?: Record<string, unknown> }
      }>`select muid, data from sandbox.messages where app_id = ${appIdOf(cfg)}`.execute(tsb.sandbox.store)
      expect(hasUnstorable(JSON.stringify([users.rows, messages.rows]).replace(/\\u0000|\\ud[89a-f]../gi, '\u0000'))).toBe(false)
      expect(messages.rows.find((m) => m.muid === '2')?.data.text).toBe('nulhere')
      expect(messages.rows.find((m) => m.muid === '9')?.data.metadata).toMatchObject({ k: 'v' })
      expect(users.rows.find((u) => u.uid === '4')?.metadata).toMatchObject({ key: 'val', nested: { x: [''] } })
      if (engine !== 'postgres') {
        expect(users.rows.find((u) => u.uid === '3')?.name).toBe('Null')
      }
      expect(users.rows.find((u) => u.uid === '9')?.name).toBe('N'.repeat(100))
      expect(messages.rows.filter((m) => m.muid === '5' || m.muid.startsWith('5-p')).length).toBeGreaterThan(1)

      const verifyOut = mkdtempSync(join(tmpdir(), 'cf-badval-verify-'))
      const verify = await runCli(['verify', '--config', cfg, '--out', verifyOut, '--sample', '1000'], { CHATFERRY_LOG_LEVEL: 'error' }).done
      expect(verify.code, verify.stderr.slice(-2000)).toBe(0)
    })

    it('verify finishes when the ledger holds U+0000 and a lone surrogate from an older version', async () => {
      const c = new pg.Client({ connectionString: state.url })
      await c.connect()
      try {
        // What an older version stored: the raw characters, escaped by JSON.stringify.
        const before = await c.query<{ payload: string }>(`select payload from chatferry.items where entity = 'messages' and target_key = '2'`)
        const payload = JSON.parse(before.rows[0]?.payload as string) as { data: { text: string } }
        payload.data.text = 'nul\u0000here \ud800'
        const text = JSON.stringify(payload)
        expect(text).toContain('\\u0000')
        await c.query(`update chatferry.items set payload = $1 where entity = 'messages' and target_key = '2'`, [text])
      } finally {
        await c.end()
      }
      const out = mkdtempSync(join(tmpdir(), 'cf-badval-verify-'))
      const verify = await runCli(['verify', '--config', cfg, '--out', out, '--sample', '1000'], { CHATFERRY_LOG_LEVEL: 'error' }).done
      expect([0, 3], verify.stderr.slice(-2000)).toContain(verify.code)
      const report = VerifyReport.parse(JSON.parse(readFileSync(join(out, 'verify-report.json'), 'utf8')))
      // The only mismatch is the altered text, shown escaped.
      expect(
        report.mismatches.map((m) => ({ kind: m.kind, targetKey: m.targetKey, field: m.field, expected: m.expected, actual: m.actual })),
      ).toEqual([{ kind: 'field', targetKey: '2', field: 'text', expected: 'nul\\u0000here \\ud800', actual: 'nulhere' }])
      expect(verify.code).toBe(3)
    })
  })
}

function appIdOf(cfgPath: string): string {
  return /appId: (\S+)/.exec(readFileSync(cfgPath, 'utf8'))?.[1] as string
}
