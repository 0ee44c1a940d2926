/**
 * Every source row is accounted for, whatever its key: a catalogue of bad keys (NULL in each key
 * column, exact duplicates, case twins) at page sizes 1, 2 and 3, on Postgres, MariaDB (default
 * case-insensitive collation) and SQLite, through the generic-sql connector, and NULL keys through
 * the Mattermost connector on Postgres. Each case checks records + problems against the test's own
 * `SELECT count(*)`, and each problem's legacy id, field and reason. Then `chatferry plan` shows the
 * source count beside records + problems.
 */
import { appendFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { stringify } from 'yaml'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import type { Cursor } from '../../../src/model/connector.ts'
import type { LegacyEntity } from '../../../src/model/records.ts'
import { PlanReport } from '../../../src/report/schema.ts'
import { type GenericEngine, openGenericWriter, type Row } from '../../fixtures/generic-sql/fixture.ts'
import { loadMattermostFixture, openFixtureWriter } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase } from '../../helpers/db.ts'
import { createSource, readAll, sortProblems, type Source } from '../../helpers/key-source.ts'
import { runCli, writeConfig } from '../../helpers/ledger-fixtures.ts'

/** Columns of each entity's table: the canonical names, no constraints, so any bad key can be stored. */
const COLUMNS: Record<LegacyEntity, string[]> = {
  users: ['id', 'name'],
  groups: ['id', 'name'],
  members: ['group_id', 'user_id'],
  messages: ['id', 'sender_id', 'receiver_type', 'receiver_id', 'sent_at'],
}

interface Case {
  readonly name: string
  readonly entity: LegacyEntity
  readonly rows: readonly Row[]
  /** Legacy ids of the rows that must come out as records. */
  readonly records: readonly string[]
  readonly problems: readonly { legacyId: string; field: string; reason: RegExp }[]
  readonly pageSizes: readonly number[]
  /** The table's columns when not the entity's usual ones. */
  readonly columns?: readonly string[]
}

const user = (id: string | null): Row => ({ id, name: `name of ${id}` })
const msg = (id: string | null, sentAt: string | null): Row => ({ id, sender_id: 'u1', receiver_type: 'user', receiver_id: 'u2', sent_at: sentAt })
const T1 = '2024-03-01 12:00:00'
const T2 = '2024-03-01 12:01:00'
const nullKey = (column: string) => new RegExp(`^key column ${column} is NULL: the row cannot be ordered or resumed$`)
const duplicate = (first: string, twin: string) => new RegExp(`^duplicate key .*: legacy rows ${first} and ${twin} share it`)
const ALL = [1, 2, 3] as const

const CASES: readonly Case[] = [
  {
    name: 'users: NULL id',
    entity: 'users',
    rows: [user('u1'), user(null), user('u3')],
    records: ['u1', 'u3'],
    problems: [{ legacyId: '?', field: 'id', reason: nullKey('id') }],
    pageSizes: ALL,
  },
  {
    name: 'groups: NULL id',
    entity: 'groups',
    rows: [user('g1'), user(null), user(null)],
    records: ['g1'],
    problems: [
      { legacyId: '?', field: 'id', reason: nullKey('id') },
      { legacyId: '?', field: 'id', reason: nullKey('id') },
    ],
    pageSizes: ALL,
  },
  {
    name: 'members: NULL group_id, NULL user_id',
    entity: 'members',
    rows: [
      { group_id: 'g1', user_id: 'u1' },
      { group_id: null, user_id: 'u2' },
      { group_id: 'g1', user_id: null },
      { group_id: 'g2', user_id: 'u1' },
    ],
    records: ['g1/u1', 'g2/u1'],
    problems: [
      { legacyId: '?/u2', field: 'group_id', reason: nullKey('group_id') },
      { legacyId: 'g1/?', field: 'user_id', reason: nullKey('user_id') },
    ],
    pageSizes: ALL,
  },
  {
    // The rows of one key come in the database's order, so either copy may be read first: the
    // readable one is the record whichever it is, and the other is its duplicate, unreadable too.
    name: 'members: a duplicate key whose other copy is unreadable keeps the readable copy',
    entity: 'members',
    columns: ['group_id', 'user_id', 'scope'],
    rows: [
      { group_id: 'g1', user_id: 'u1', scope: 'emperor' },
      { group_id: 'g1', user_id: 'u1', scope: 'admin' },
      { group_id: 'g1', user_id: 'u2', scope: 'moderator' },
      { group_id: 'g2', user_id: 'u1', scope: 'tsar' },
      { group_id: 'g2', user_id: 'u1', scope: 'czar' },
    ],
    records: ['g1/u1', 'g1/u2'],
    problems: [
      { legacyId: 'g1/u1', field: 'group_id, user_id', reason: /the first readable one \(g1\/u1\) is kept.*also unreadable: scope: expected one of/ },
      { legacyId: 'g2/u1', field: 'scope', reason: /^expected one of/ },
      { legacyId: 'g2/u1', field: 'group_id, user_id', reason: /g2\/u1 has a problem of its own.*also unreadable: scope/ },
    ],
    pageSizes: ALL,
  },
  {
    name: 'messages: NULL sent_at, NULL id',
    entity: 'messages',
    rows: [msg('m1', T1), msg('m2', null), msg(null, T2), msg('m4', T2)],
    records: ['m1', 'm4'],
    problems: [
      { legacyId: 'm2', field: 'sent_at', reason: nullKey('sent_at') },
      { legacyId: '?', field: 'id', reason: nullKey('id') },
    ],
    pageSizes: ALL,
  },
  {
    name: 'users: an exact duplicate id three times',
    entity: 'users',
    rows: [user('a'), user('b'), user('b'), user('b'), user('c')],
    records: ['a', 'b', 'c'],
    problems: [
      { legacyId: 'b', field: 'id', reason: duplicate('b', 'b') },
      { legacyId: 'b', field: 'id', reason: duplicate('b', 'b') },
    ],
    pageSizes: ALL,
  },
  {
    name: 'messages: an exact duplicate (sent_at, id) among rows of one instant',
    entity: 'messages',
    rows: [msg('m1', T1), msg('m2', T2), msg('m2', T2), msg('m3', T2)],
    records: ['m1', 'm2', 'm3'],
    problems: [{ legacyId: 'm2', field: 'sent_at, id', reason: duplicate('m2', 'm2') }],
    pageSizes: ALL,
  },
  {
    name: 'users: case twins are distinct keys, an exact twin is a duplicate',
    entity: 'users',
    rows: [user('Bob'), user('alice'), user('bob'), user('BOB'), user('bob'), user('Zed')],
    records: ['Bob', 'alice', 'bob', 'BOB', 'Zed'],
    problems: [{ legacyId: 'bob', field: 'id', reason: duplicate('bob', 'bob') }],
    pageSizes: ALL,
  },
  {
    name: 'messages: case-twin ids in one instant',
    entity: 'messages',
    rows: [msg('Ab', T1), msg('ab', T1), msg('AB', T1), msg('aB', T1), msg('c', T2)],
    records: ['Ab', 'ab', 'AB', 'aB', 'c'],
    problems: [],
    pageSizes: ALL,
  },
]

const ENGINES: readonly GenericEngine[] = ['postgres', 'mysql', 'sqlite']

for (const engine of ENGINES) {
  const skip = engine === 'mysql' && inject('mysqlUrl') === undefined
  describe.skipIf(skip)(`bad keys, generic-sql × ${engine === 'mysql' ? 'MariaDB (default collation)' : engine}`, () => {
    let source: Source
    const tables = new Map<string, string>()

    beforeAll(async () => {
      source = await createSource(engine)
      const w = await openGenericWriter(engine, source.url)
      try {
        for (const [i, c] of CASES.entries()) {
          const table = `keys_${i}`
          // MariaDB: the server's default collation for utf8mb4, case-insensitive.
          const tail = engine === 'mysql' ? ' DEFAULT CHARSET=utf8mb4' : ''
          await w.exec(`CREATE TABLE ${table} (${(c.columns ?? COLUMNS[c.entity]).map((col) => `${col} varchar(40)`).join(', ')})${tail}`)
          await w.insert(table, c.rows)
          tables.set(c.name, table)
        }
      } finally {
        await w.close()
      }
    })
    afterAll(async () => source?.drop())

    const runs = CASES.flatMap((c) => c.pageSizes.map((pageSize) => ({ ...c, pageSize })))
    it.each(runs)('$name, page size $pageSize', async (c) => {
      const table = tables.get(c.name) as string
      const config = SourceConfigSchema.parse({
        connector: 'generic-sql',
        url: source.url,
        entities: { [c.entity]: { query: `SELECT ${(c.columns ?? COLUMNS[c.entity]).join(', ')} FROM ${table}` } },
      })
      const session = await createConnector(config).open()
      try {
        const { records, problems } = await readAll(session, c.entity, c.pageSize)
        const counted = await source.count(table)
        expect(records.length + problems.length).toBe(counted)
        expect(await session.count(c.entity)).toBe(counted)
        expect([...records].sort()).toEqual([...c.records].sort())
        const got = sortProblems(problems)
        const want = sortProblems(c.problems)
        expect(got.map((p) => [p.legacyId, p.field])).toEqual(want.map((p) => [p.legacyId, p.field]))
        got.forEach((p, i) => expect(p.reason).toMatch((want[i] as { reason: RegExp }).reason))
        // Each problem keeps its own ledger entry, even where rows share a legacy id.
        const keys = problems.map((p) => `${p.legacyId}#${p.instance ?? ''}`)
        expect(new Set(keys).size).toBe(keys.length)
      } finally {
        await session.close()
      }
    })

    it('resumes the NULL-key pass from its cursor, neither losing nor repeating a row', async () => {
      const c = CASES.find((x) => x.name === 'messages: NULL sent_at, NULL id') as Case
      const config = SourceConfigSchema.parse({
        connector: 'generic-sql',
        url: source.url,
        entities: { messages: { query: `SELECT ${COLUMNS.messages.join(', ')} FROM ${tables.get(c.name)}` } },
      })
      const session = await createConnector(config).open()
      try {
        const whole = await readAll(session, 'messages', 1)
        // The third page is the first of the NULL-key pass (two keyed rows first).
        const at = whole.cursors[2] as Cursor
        expect(at).toEqual({ '#nullKeys': 1 })
        const rest = await readAll(session, 'messages', 1, at)
        expect(rest.records).toEqual([])
        expect(rest.problems).toHaveLength(1)
        expect(sortProblems([...whole.problems.slice(0, 1), ...rest.problems]).map((p) => p.legacyId)).toEqual(
          sortProblems(whole.problems).map((p) => p.legacyId),
        )
      } finally {
        await session.close()
      }
    })
  })
}

describe('bad keys, mattermost × postgres', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>
  beforeAll(async () => {
    db = await createTestDatabase('cf_keys_mm')
    await loadMattermostFixture('postgres', db.url)
    const w = await openFixtureWriter('postgres', db.url)
    try {
      // Mattermost's own schema says NOT NULL; a damaged copy may not.
      await w.exec('ALTER TABLE users DROP CONSTRAINT users_pkey')
      await w.exec('ALTER TABLE users ALTER COLUMN id DROP NOT NULL')
      await w.exec("INSERT INTO users (id, username, email, createat, updateat, deleteat) VALUES (NULL, 'nullid', 'n@example.com', 1, 1, 0)")
      await w.exec(`UPDATE posts SET createat = NULL WHERE id = (SELECT min(id) FROM posts WHERE (originalid = '' OR originalid IS NULL))`)
    } finally {
      await w.close()
    }
  })
  afterAll(async () => db?.drop())

  it.each([
    { entity: 'users' as const, table: 'users', where: '', field: 'id' },
    { entity: 'messages' as const, table: 'posts', where: " WHERE (originalid = '' OR originalid IS NULL)", field: 'createat' },
  ])('$entity: a NULL $field is a problem, and every row is accounted for', async ({ entity, table, where, field }) => {
    const session = await createConnector(
      SourceConfigSchema.parse({ connector: 'mattermost', url: db.url, fileBaseUrl: 'https://files.example.com' }),
    ).open()
    const c = new pg.Client({ connectionString: db.url })
    await c.connect()
    try {
      const counted = Number((await c.query(`SELECT count(*) AS n FROM ${table}${where}`)).rows[0].n)
      const nullId = entity === 'users' ? '?' : String((await c.query(`SELECT id FROM posts WHERE createat IS NULL`)).rows[0].id)
      for (const pageSize of [1, 3]) {
        const { records, problems } = await readAll(session, entity, pageSize)
        expect(records.length + problems.length).toBe(counted)
        const keyProblems = problems.filter((p) => p.reason.startsWith('key column'))
        expect(keyProblems.map((p) => [p.legacyId, p.reason])).toEqual([
          [nullId, `key column ${field} is NULL: the row cannot be ordered or resumed`],
        ])
      }
    } finally {
      await c.end()
      await session.close()
    }
  })
})

describe('chatferry plan shows the source count beside records + problems', () => {
  it('per entity, in the terminal and the JSON report', async () => {
    const source = await createSource('sqlite')
    const out = mkdtempSync(join(tmpdir(), 'cf-keys-plan-'))
    try {
      const w = await openGenericWriter('sqlite', source.url)
      await w.exec('CREATE TABLE people (id varchar(40), name varchar(40))')
      await w.insert('people', [user('u1'), user(null), user('u2'), user('u2')])
      await w.close()
      const cfg = writeConfig({ appId: 'keys-app', apiKey: 'k-secret', baseUrl: 'http://127.0.0.1:9/apps/keys-app/v3' })
      appendFileSync(
        cfg,
        stringify({
          source: { connector: 'generic-sql', url: source.url, pageSize: 1, entities: { users: { query: 'SELECT id, name FROM people' } } },
        }),
      )
      const r = await runCli(['plan', '--config', cfg, '--out', out, '--fail-on', 'countMismatch>0'], { CHATFERRY_LOG_LEVEL: 'error' }).done
      const file = join(out, 'plan-report.json')
      expect(existsSync(file), r.stderr.slice(-2000)).toBe(true)
      const report = PlanReport.parse(JSON.parse(readFileSync(file, 'utf8')))
      const counted = await source.count('people')
      expect(report.entities.users).toMatchObject({ sourceRows: counted, records: 2, problems: 2, sourceCount: counted })
      expect(report.entities.users.rejected.byReason).toMatchObject({
        'NULL key id': { count: 1, samples: ['?'] },
        'duplicate key (id)': { count: 1, samples: ['u2'] },
      })
      expect(report.gates).toEqual([{ expression: 'countMismatch>0', value: 0, passed: true }])
      expect(r.stdout).toContain(`users ${counted} = 2 + 2 (source counts ${counted} ✓)`)
      expect(r.stdout).not.toContain('COUNT MISMATCH')
    } finally {
      await source.drop()
      rmSync(out, { recursive: true, force: true })
    }
  })
})
