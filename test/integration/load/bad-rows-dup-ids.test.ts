/**
 * A legacy id in two rows of different keys is never silently overwritten: through the generic-sql
 * connector on Postgres, MariaDB (default case-insensitive collation) and SQLite, at page sizes 1,
 * 2 and 3, a message id repeated under other `sent_at` values and a user id repeated under a
 * configured composite key. Each read accounts for every row against the test's own
 * `SELECT count(*)`, keeps the row with the smallest key and names both rows in the problem of the
 * other; a read resumed between the two rows, and a delta read that sees only the later row,
 * report the same problem. Then `chatferry run` puts
 * the kept row on the platform and `chatferry rejects` lists the other.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import type { RowProblem, SourceSession } from '../../../src/model/connector.ts'
import type { LegacyEntity, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { type GenericEngine, openGenericWriter, type Row } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { createSource, readAll, type Source } from '../../helpers/key-source.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

const T1 = '2024-03-01 12:00:00'
const T2 = '2024-03-01 12:01:00'
const T3 = '2024-03-01 12:02:00'
const msg = (id: string, sentAt: string): Row => ({ id, sender_id: 'u1', receiver_type: 'user', receiver_id: 'u2', sent_at: sentAt })
const ms = (sqlTime: string) => Date.parse(`${sqlTime.replace(' ', 'T')}Z`)

/** The reason of the problem of `id`'s row at `key`, when its row at `kept` is kept. */
const reason = (id: string, kept: string, key: string) =>
  `duplicate id ${id}: also in the row with key ${kept}, which is kept; this row's key is ${key}, it is not imported`

interface Case {
  readonly name: string
  readonly entity: LegacyEntity
  readonly columns: readonly string[]
  readonly keys?: readonly string[]
  readonly rows: readonly Row[]
  /** Legacy id → the kept record's distinguishing value (messages: sentAt; users: name). */
  readonly kept: Readonly<Record<string, number | string>>
  readonly problems: readonly { legacyId: string; field: string; reason: string; instance: string }[]
}

const CASES: readonly Case[] = [
  {
    name: 'messages: m-17 at three instants, the smallest inserted last; case twins of another id',
    entity: 'messages',
    columns: ['id', 'sender_id', 'receiver_type', 'receiver_id', 'sent_at'],
    rows: [msg('m1', T1), msg('m-17', T3), msg('m2', T2), msg('Ab', T1), msg('m-17', T2), msg('m3', T3), msg('ab', T2), msg('m-17', T3)],
    kept: { m1: ms(T1), 'm-17': ms(T2), m2: ms(T2), m3: ms(T3), Ab: ms(T1), ab: ms(T2) },
    problems: [
      // The exact twin of (T3, m-17) is a duplicate key; the first of the two is the duplicate id.
      { legacyId: 'm-17', field: 'id', reason: reason('m-17', `(sent_at=${T2}, id=m-17)`, `(sent_at=${T3}, id=m-17)`), instance: 'duplicate-id-2' },
      { legacyId: 'm-17', field: 'sent_at, id', reason: 'duplicate key', instance: 'duplicate-2' },
    ],
  },
  {
    name: 'users keyed by (name, id): u2 under two names',
    entity: 'users',
    columns: ['id', 'name'],
    keys: ['name', 'id'],
    rows: [
      { id: 'u1', name: 'Ann' },
      { id: 'u2', name: 'Bea' },
      { id: 'u3', name: 'Cid' },
      { id: 'u2', name: 'Al' },
    ],
    kept: { u1: 'Ann', u2: 'Al', u3: 'Cid' },
    problems: [{ legacyId: 'u2', field: 'id', reason: reason('u2', '(name=Al, id=u2)', '(name=Bea, id=u2)'), instance: 'duplicate-id-2' }],
  },
]

/** What tells two rows of one legacy id apart in a record. */
const valueOf = (entity: LegacyEntity, record: unknown) => (entity === 'messages' ? (record as LegacyMessage).sentAt : (record as LegacyUser).name)

const comparable = (p: RowProblem) => ({
  legacyId: p.legacyId,
  field: p.field,
  reason: p.reason.startsWith('duplicate key') ? 'duplicate key' : p.reason,
  instance: p.instance,
})
const byText = (a: unknown, b: unknown) => JSON.stringify(a).localeCompare(JSON.stringify(b))

function openCase(source: Source, c: Case, table: string): Promise<SourceSession> {
  const query = { query: `SELECT ${c.columns.join(', ')} FROM ${table}`, ...(c.keys ? { keys: c.keys } : {}) }
  return createConnector(SourceConfigSchema.parse({ connector: 'generic-sql', url: source.url, entities: { [c.entity]: query } })).open()
}

const ENGINES: readonly GenericEngine[] = ['postgres', 'mysql', 'sqlite']

for (const engine of ENGINES) {
  const skip = engine === 'mysql' && inject('mysqlUrl') === undefined
  describe.skipIf(skip)(`duplicate ids, generic-sql × ${engine === 'mysql' ? 'MariaDB (default collation)' : engine}`, () => {
    let source: Source
    const tables = new Map<string, string>()

    beforeAll(async () => {
      source = await createSource(engine)
      const w = await openGenericWriter(engine, source.url)
      try {
        for (const [i, c] of CASES.entries()) {
          const table = `dup_ids_${i}`
          const tail = engine === 'mysql' ? ' DEFAULT CHARSET=utf8mb4' : ''
          await w.exec(`CREATE TABLE ${table} (${c.columns.map((col) => `${col} varchar(40)`).join(', ')})${tail}`)
          await w.insert(table, c.rows)
          tables.set(c.name, table)
        }
        await w.exec(
          `CREATE TABLE dup_delta (id varchar(40), sender_id varchar(40), receiver_type varchar(40), receiver_id varchar(40), sent_at bigint)`,
        )
        await w.insert('dup_delta', [
          { ...msg('m-17', ''), sent_at: 3000 },
          { ...msg('m1', ''), sent_at: 2000 },
          { ...msg('m-17', ''), sent_at: 1000 },
          { ...msg('m2', ''), sent_at: 3000 },
        ])
      } finally {
        await w.close()
      }
    })
    afterAll(async () => source?.drop())

    const runs = CASES.flatMap((c) => [1, 2, 3].map((pageSize) => ({ ...c, pageSize })))
    it.each(runs)('$name, page size $pageSize', async (c) => {
      const table = tables.get(c.name) as string
      const session = await openCase(source, c, table)
      try {
        const { records, kept, problems } = await readAll(session, c.entity, c.pageSize)
        const counted = await source.count(table)
        expect(records.length + problems.length).toBe(counted)
        expect(await session.count(c.entity)).toBe(counted)
        // Each legacy id once, as the row with the smallest key.
        expect(Object.fromEntries(records.map((id, i) => [id, valueOf(c.entity, kept[i])]))).toEqual(c.kept)
        expect(records).toHaveLength(Object.keys(c.kept).length)
        expect(problems.map(comparable).sort(byText)).toEqual([...c.problems].sort(byText))
      } finally {
        await session.close()
      }
    })

    it('resumed from a cursor between the kept row and its duplicate, reports the same problem', async () => {
      const c = CASES[0] as Case
      const session = await openCase(source, c, tables.get(c.name) as string)
      try {
        const whole = await readAll(session, 'messages', 1)
        // The cursor right after the kept row (T2, m-17): the duplicate (T3, m-17) is still to come.
        const at = whole.cursors.find((k) => k.id === 'm-17' && k.sent_at === T2)
        expect(at).toBeDefined()
        const rest = await readAll(session, 'messages', 1, at)
        expect(rest.records).not.toContain('m-17')
        expect(rest.problems.map(comparable)).toEqual(whole.problems.map(comparable))
      } finally {
        await session.close()
      }
    })

    it('a delta read that sees only the later row of an id still reports it (the kept row is chosen from the whole query)', async () => {
      const query = { query: 'SELECT id, sender_id, receiver_type, receiver_id, sent_at FROM dup_delta', timeFormat: 'epoch-ms' }
      const session = await createConnector(
        SourceConfigSchema.parse({ connector: 'generic-sql', url: source.url, entities: { messages: query } }),
      ).open()
      try {
        const rows: { records: string[]; problems: RowProblem[] } = { records: [], problems: [] }
        for await (const page of session.read('messages', { pageSize: 1, since: 2500 })) {
          for (const row of page.rows) {
            if (row.ok) {
              rows.records.push(row.record.id)
            } else {
              rows.problems.push(row)
            }
          }
        }
        expect(rows.records.length + rows.problems.length).toBe(await session.count('messages', { since: 2500 }))
        expect(rows.records).toEqual(['m2'])
        expect(rows.problems.map(comparable)).toEqual([
          { legacyId: 'm-17', field: 'id', reason: reason('m-17', '(sent_at=1000, id=m-17)', '(sent_at=3000, id=m-17)'), instance: 'duplicate-id-2' },
        ])
      } finally {
        await session.close()
      }
    })
  })
}

describe('chatferry run keeps the smallest key, chatferry rejects lists the duplicate', () => {
  let tsb: TestSandbox
  let state: TestDatabase
  let source: Source
  beforeAll(async () => {
    tsb = await startTestSandbox()
    state = await createTestDatabase('cf_dupids_state')
    source = await createSource('sqlite')
  })
  afterAll(async () => {
    await tsb?.close()
    await state?.drop()
    await source?.drop()
  })

  it('one m-17 on the platform, sent at the smaller instant; the other row rejected naming both', async () => {
    const w = await openGenericWriter('sqlite', source.url)
    await w.exec('CREATE TABLE people (id varchar(40), name varchar(40))')
    await w.insert('people', [
      { id: 'u1', name: 'Ann' },
      { id: 'u2', name: 'Bea' },
    ])
    await w.exec(
      'CREATE TABLE lines (id varchar(40), sender_id varchar(40), receiver_type varchar(40), receiver_id varchar(40), sent_at varchar(40), text varchar(40))',
    )
    const said = (row: Row): Row => ({ ...row, text: `${row.id} at ${row.sent_at}` })
    await w.insert('lines', [said(msg('m1', T1)), said(msg('m-17', T3)), said(msg('m-17', T2)), said(msg('m2', T3))])
    await w.close()
    const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    const cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      policies: { retention: { oldMessages: 'send' } },
      load: { quotaWindowMs: 10_000 },
      source: {
        connector: 'generic-sql',
        url: source.url,
        pageSize: 1,
        entities: { users: { query: 'SELECT id, name FROM people' }, messages: { query: 'SELECT * FROM lines' } },
      },
    })
    const run = await runCli(['run', '--config', cfg], { CHATFERRY_LOG_LEVEL: 'error' }).done
    expect(run.code, run.stderr.slice(-2000)).toBe(3)
    const out = await runCli(['rejects', '--config', cfg, '--json']).done
    const rejects = JSON.parse(out.stdout) as { entity: string; legacyId: string; code: string; message: string }[]
    expect(rejects.map(({ entity, legacyId, code, message }) => ({ entity, legacyId, code, message }))).toEqual([
      {
        entity: 'messages',
        legacyId: 'm-17',
        code: 'SOURCE_ROW_INVALID',
        message: `id: ${reason('m-17', `(sent_at=${T2}, id=m-17)`, `(sent_at=${T3}, id=m-17)`)}`,
      },
    ])
    const onPlatform = await sql<{
      muid: string
      sent_at: unknown
      data: { text?: string }
    }>`select muid, sent_at, data from sandbox.messages where app_id = ${app.id} order by muid`.execute(tsb.sandbox.store)
    expect(onPlatform.rows.map((r) => [r.muid, Number(r.sent_at), r.data.text])).toEqual([
      ['m-17', ms(T2) / 1000, `m-17 at ${T2}`],
      ['m1', ms(T1) / 1000, `m1 at ${T1}`],
      ['m2', ms(T3) / 1000, `m2 at ${T3}`],
    ])
  })
})
