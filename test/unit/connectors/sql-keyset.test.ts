import { describe, expect, it } from 'vitest'

import { deltaBound } from '../../../connectors/generic-sql/entity-table.ts'
import {
  buildCountQuery,
  buildDuplicateIdQuery,
  buildKeyEqualsQuery,
  buildKeysetQuery,
  buildNullKeyQuery,
  cursorOf,
  DIALECTS,
  type KeyColumn,
  sameKey,
} from '../../../connectors/sql/dialect.ts'
import { idsCanRepeat } from '../../../connectors/sql/duplicate-ids.ts'
import { describeSource, engineOf, scrubSecret, sqlitePathOf } from '../../../connectors/sql/source-url.ts'
import type { Cursor } from '../../../src/model/connector.ts'

const one: KeyColumn[] = [{ name: 'id', expr: 'src."id"' }]
const two: KeyColumn[] = [
  { name: 'sent_at', expr: 'src."sent_at"' },
  { name: 'id', expr: 'src."id"' },
]
const twoMy: KeyColumn[] = [
  { name: 'createat', expr: 'p.`CreateAt`' },
  { name: 'id', expr: 'p.`Id`' },
]

describe('buildKeysetQuery', () => {
  const cases = [
    {
      name: 'first page, one key (Postgres)',
      engine: 'postgres' as const,
      keys: one,
      after: undefined,
      sql: 'SELECT src.* FROM (q) AS src WHERE src."id" IS NOT NULL ORDER BY src."id" LIMIT 10',
      params: [],
    },
    {
      name: 'next page, one key (SQLite)',
      engine: 'sqlite' as const,
      keys: one,
      after: { id: 'u5' },
      sql: 'SELECT src.* FROM (q) AS src WHERE src."id" IS NOT NULL AND src."id" > ? ORDER BY src."id" LIMIT 10',
      params: ['u5'],
    },
    {
      name: 'two keys, row values and a range lead (Postgres)',
      engine: 'postgres' as const,
      keys: two,
      after: { sent_at: '2024-01-01 00:00:00', id: 7 },
      sql: 'SELECT src.* FROM (q) AS src WHERE src."sent_at" IS NOT NULL AND src."id" IS NOT NULL AND src."sent_at" >= $1 AND (src."sent_at", src."id") > ($2, $3) ORDER BY src."sent_at", src."id" LIMIT 10',
      params: ['2024-01-01 00:00:00', '2024-01-01 00:00:00', 7],
    },
    {
      name: 'two keys, expanded form (MySQL)',
      engine: 'mysql' as const,
      keys: twoMy,
      after: { createat: 100, id: 'p1' },
      sql: 'SELECT src.* FROM (q) AS src WHERE p.`CreateAt` IS NOT NULL AND p.`Id` IS NOT NULL AND p.`CreateAt` >= ? AND (p.`CreateAt` > ? OR (p.`CreateAt` = ? AND p.`Id` > ?)) ORDER BY p.`CreateAt`, p.`Id` LIMIT 10',
      params: [100, 100, 100, 'p1'],
    },
    {
      name: 'text keys get a byte tie-break after the collation order (MySQL)',
      engine: 'mysql' as const,
      keys: [{ name: 'id', expr: 'src.`id`', text: true }],
      after: { id: 'Bob' },
      sql: 'SELECT src.* FROM (q) AS src WHERE src.`id` IS NOT NULL AND src.`id` >= ? AND (src.`id` > ? OR (src.`id` = ? AND BINARY src.`id` > ?)) ORDER BY src.`id`, BINARY src.`id` LIMIT 10',
      params: ['Bob', 'Bob', 'Bob', 'Bob'],
    },
    {
      name: 'only text keys get the tie-break; numbers keep index order (MySQL)',
      engine: 'mysql' as const,
      keys: [
        { name: 'createat', expr: 'p.`CreateAt`' },
        { name: 'id', expr: 'p.`Id`', text: true },
      ],
      after: { createat: 100, id: 'p1' },
      sql: 'SELECT src.* FROM (q) AS src WHERE p.`CreateAt` IS NOT NULL AND p.`Id` IS NOT NULL AND p.`CreateAt` >= ? AND (p.`CreateAt` > ? OR (p.`CreateAt` = ? AND p.`Id` > ?) OR (p.`CreateAt` = ? AND p.`Id` = ? AND BINARY p.`Id` > ?)) ORDER BY p.`CreateAt`, p.`Id`, BINARY p.`Id` LIMIT 10',
      params: [100, 100, 100, 'p1', 100, 'p1', 'p1'],
    },
    {
      name: 'text keys need no tie-break where collations are deterministic (Postgres)',
      engine: 'postgres' as const,
      keys: [{ name: 'id', expr: 'src."id"', text: true }],
      after: { id: 'Bob' },
      sql: 'SELECT src.* FROM (q) AS src WHERE src."id" IS NOT NULL AND src."id" > $1 ORDER BY src."id" LIMIT 10',
      params: ['Bob'],
    },
    {
      name: 'null key value still binds (cursor of a NULL key)',
      engine: 'sqlite' as const,
      keys: one,
      after: { id: null },
      sql: 'SELECT src.* FROM (q) AS src WHERE src."id" IS NOT NULL AND src."id" > ? ORDER BY src."id" LIMIT 10',
      params: [null],
    },
  ]
  it.each(cases)('$name', ({ engine, keys, after, sql, params }) => {
    const q = buildKeysetQuery(DIALECTS[engine], { select: 'src.*', from: '(q) AS src', keys, after: after as Cursor | undefined, limit: 10 })
    expect(q).toEqual({ sql, params })
  })

  it('puts extra conditions (delta) before the keyset, parameters in text order', () => {
    const q = buildKeysetQuery(DIALECTS.postgres, {
      select: '*',
      from: 't',
      keys: two,
      after: { sent_at: 'x', id: 1 },
      limit: 5,
      where: (p) => [`src."updated_at" >= ${p.add(99)}`],
    })
    expect(q.sql).toBe(
      'SELECT * FROM t WHERE src."updated_at" >= $1 AND src."sent_at" IS NOT NULL AND src."id" IS NOT NULL AND src."sent_at" >= $2 AND (src."sent_at", src."id") > ($3, $4) ORDER BY src."sent_at", src."id" LIMIT 5',
    )
    expect(q.params).toEqual([99, 'x', 'x', 1])
  })

  it('never uses OFFSET and rejects bad limits and incomplete cursors', () => {
    expect(buildKeysetQuery(DIALECTS.mysql, { select: '*', from: 't', keys: one, limit: 1 }).sql).not.toMatch(/OFFSET/i)
    expect(() => buildKeysetQuery(DIALECTS.mysql, { select: '*', from: 't', keys: one, limit: 0 })).toThrow(TypeError)
    expect(() => buildKeysetQuery(DIALECTS.mysql, { select: '*', from: 't', keys: two, after: { id: 1 }, limit: 1 })).toThrow(/sent_at/)
  })

  it.each([
    {
      engine: 'postgres' as const,
      keys: two,
      sql: 'SELECT src.* FROM (q) AS src WHERE src."sent_at" IS NOT NULL AND src."id" IS NOT NULL AND src."sent_at" = $1 AND src."id" = $2 LIMIT 100001',
      params: ['2024-01-01 00:00:00', 7],
    },
    {
      engine: 'mysql' as const,
      keys: [
        { name: 'sent_at', expr: 'src.`sent_at`' },
        { name: 'id', expr: 'src.`id`', text: true },
      ],
      sql: 'SELECT src.* FROM (q) AS src WHERE src.`sent_at` IS NOT NULL AND src.`id` IS NOT NULL AND src.`sent_at` = ? AND src.`id` = ? AND BINARY src.`id` = ? LIMIT 100001',
      params: ['2024-01-01 00:00:00', 7, 7],
    },
  ])('buildKeyEqualsQuery reads a whole key group ($engine)', ({ engine, keys, sql, params }) => {
    const q = buildKeyEqualsQuery(
      DIALECTS[engine],
      { select: 'src.*', from: '(q) AS src', keys, limit: 100_001 },
      { sent_at: '2024-01-01 00:00:00', id: 7 },
    )
    expect(q).toEqual({ sql, params })
  })

  it.each([
    {
      engine: 'postgres' as const,
      keys: two,
      offset: 0,
      sql: 'SELECT src.* FROM (q) AS src WHERE src."updated_at" >= $1 AND (src."sent_at" IS NULL OR src."id" IS NULL) ORDER BY (src."sent_at" IS NULL), (src."id" IS NULL), src."sent_at", src."id" LIMIT 3',
    },
    {
      engine: 'mysql' as const,
      keys: [{ name: 'id', expr: 'src.`id`', text: true }],
      offset: 6,
      sql: 'SELECT src.* FROM (q) AS src WHERE src.`updated_at` >= ? AND (src.`id` IS NULL) ORDER BY (src.`id` IS NULL), src.`id`, BINARY src.`id` LIMIT 3 OFFSET 6',
    },
    {
      engine: 'sqlite' as const,
      keys: one,
      offset: 3,
      sql: 'SELECT src.* FROM (q) AS src WHERE src."updated_at" >= ? AND (src."id" IS NULL) ORDER BY (src."id" IS NULL), src."id" LIMIT 3 OFFSET 3',
    },
  ])('buildNullKeyQuery pages the NULL-key rows in one order on every engine ($engine)', ({ engine, keys, offset, sql }) => {
    const where = (p: { add(v: unknown): string }) => [`src.${DIALECTS[engine].quote('updated_at')} >= ${p.add(5)}`]
    expect(buildNullKeyQuery(DIALECTS[engine], { select: 'src.*', from: '(q) AS src', keys, limit: 3, offset, where })).toEqual({ sql, params: [5] })
    expect(() => buildNullKeyQuery(DIALECTS[engine], { select: '*', from: 't', keys, limit: 3, offset: -1 })).toThrow(TypeError)
  })

  it.each([
    { a: { id: 'Bob' }, b: { id: 'bob' }, same: false },
    { a: { id: 'bob' }, b: { id: 'bob' }, same: true },
    { a: { id: 5n }, b: { id: 5 }, same: true },
    { a: { sent_at: '2024-01-01 00:00:00.000001', id: 1 }, b: { sent_at: '2024-01-01 00:00:00.000002', id: 1 }, same: false },
  ])('sameKey($a, $b) is $same', ({ a, b, same }) => {
    const keys = 'sent_at' in a ? two : one
    expect(sameKey(a, b, keys)).toBe(same)
  })

  it.each([
    {
      engine: 'postgres' as const,
      ids: [{ name: 'id', expr: 'src."id"' }],
      keys: two,
      sql:
        'SELECT src."id" AS "id", src."sent_at" AS "sent_at" FROM (q) AS src WHERE src."x" >= $1 AND src."id" IS NOT NULL AND src."sent_at" IS NOT NULL' +
        ' AND (src."id") IN (SELECT src."id" FROM (q) AS src WHERE src."x" >= $2 AND src."id" IS NOT NULL AND src."sent_at" IS NOT NULL GROUP BY src."id" HAVING count(*) > 1)' +
        ' ORDER BY src."sent_at", src."id" LIMIT 7',
    },
    {
      engine: 'mysql' as const,
      ids: [{ name: 'id', expr: 'src.`id`', text: true }],
      keys: [
        { name: 'sent_at', expr: 'src.`sent_at`' },
        { name: 'id', expr: 'src.`id`', text: true },
      ],
      sql:
        'SELECT src.`id` AS `id`, src.`sent_at` AS `sent_at` FROM (q) AS src WHERE src.`x` >= ? AND src.`id` IS NOT NULL AND src.`sent_at` IS NOT NULL' +
        ' AND (BINARY src.`id`) IN (SELECT BINARY src.`id` FROM (q) AS src WHERE src.`x` >= ? AND src.`id` IS NOT NULL AND src.`sent_at` IS NOT NULL GROUP BY BINARY src.`id` HAVING count(*) > 1)' +
        ' ORDER BY src.`sent_at`, src.`id`, BINARY src.`id` LIMIT 7',
    },
    {
      engine: 'sqlite' as const,
      ids: [
        { name: 'group_id', expr: 'src."group_id"' },
        { name: 'user_id', expr: 'src."user_id"' },
      ],
      keys: [{ name: 'joined_at', expr: 'src."joined_at"' }],
      sql:
        'SELECT src."group_id" AS "group_id", src."user_id" AS "user_id", src."joined_at" AS "joined_at" FROM (q) AS src' +
        ' WHERE src."x" >= ? AND src."group_id" IS NOT NULL AND src."user_id" IS NOT NULL AND src."joined_at" IS NOT NULL' +
        ' AND (src."group_id", src."user_id") IN (SELECT src."group_id", src."user_id" FROM (q) AS src WHERE src."x" >= ? AND src."group_id" IS NOT NULL AND src."user_id" IS NOT NULL AND src."joined_at" IS NOT NULL GROUP BY src."group_id", src."user_id" HAVING count(*) > 1)' +
        ' ORDER BY src."joined_at" LIMIT 7',
    },
  ])('buildDuplicateIdQuery finds the ids of more than one keyed row, in key order ($engine)', ({ engine, ids, keys, sql }) => {
    const where = (p: { add(v: unknown): string }) => [`src.${DIALECTS[engine].quote('x')} >= ${p.add(5)}`]
    expect(buildDuplicateIdQuery(DIALECTS[engine], { from: '(q) AS src', ids, keys, limit: 7, where })).toEqual({ sql, params: [5, 5] })
    expect(() => buildDuplicateIdQuery(DIALECTS[engine], { from: 't', ids: [], keys, limit: 7 })).toThrow(TypeError)
  })

  it.each([
    { ids: ['id'], keys: ['id'], repeat: false },
    { ids: ['id'], keys: ['sent_at', 'id'], repeat: true },
    { ids: ['id'], keys: ['email'], repeat: true },
    { ids: ['group_id', 'user_id'], keys: ['user_id', 'group_id'], repeat: false },
    { ids: ['group_id', 'user_id'], keys: ['group_id'], repeat: false },
    { ids: ['group_id', 'user_id'], keys: ['group_id', 'joined_at'], repeat: true },
  ])('ids $ids under keys $keys can repeat: $repeat', ({ ids, keys, repeat }) => {
    const col = (name: string): KeyColumn => ({ name, expr: name })
    expect(idsCanRepeat(ids.map(col), keys.map(col))).toBe(repeat)
  })

  it('counts with the same conditions', () => {
    expect(buildCountQuery(DIALECTS.sqlite, { from: 't', where: (p) => [`a >= ${p.add(1)}`] })).toEqual({
      sql: 'SELECT count(*) AS n FROM t WHERE a >= ?',
      params: [1],
    })
  })
})

describe('quoting, cursors, URLs', () => {
  it.each([
    { engine: 'postgres' as const, id: 'we"ird', want: '"we""ird"' },
    { engine: 'sqlite' as const, id: 'Posts', want: '"Posts"' },
    { engine: 'mysql' as const, id: 'we`ird', want: '`we``ird`' },
  ])('$engine quotes $id', ({ engine, id, want }) => expect(DIALECTS[engine].quote(id)).toBe(want))

  it('cursorOf keeps JSON-safe key values', () => {
    expect(cursorOf({ sent_at: '2024-01-01 00:00:00', id: 5n, x: 1 }, [...two])).toEqual({ sent_at: '2024-01-01 00:00:00', id: 5 })
    expect(cursorOf({ sent_at: new Date(0), id: null }, [...two])).toEqual({ sent_at: '1970-01-01T00:00:00.000Z', id: null })
  })

  it.each([
    { url: 'postgres://u:p@h/db', engine: 'postgres' },
    { url: 'postgresql://h/db', engine: 'postgres' },
    { url: 'mysql://h/db', engine: 'mysql' },
    { url: 'mariadb://h/db', engine: 'mysql' },
    { url: 'sqlite:./chat.db', engine: 'sqlite' },
    { url: 'mongodb://h/db', engine: undefined },
  ])('engineOf($url)', ({ url, engine }) => expect(engineOf(url)).toBe(engine))

  it.each([
    { url: 'sqlite:data/chat.db', path: 'data/chat.db' },
    { url: 'sqlite://data/chat.db', path: 'data/chat.db' },
    { url: 'sqlite:/srv/chat.db', path: '/srv/chat.db' },
    { url: 'sqlite:///srv/chat.db', path: '/srv/chat.db' },
  ])('sqlitePathOf($url)', ({ url, path }) => expect(sqlitePathOf(url)).toBe(path))

  it('never shows a password', () => {
    expect(describeSource('postgres://me:hunter22@db.example.com:5432/chat')).toBe('postgres://me:***@db.example.com:5432/chat')
    expect(scrubSecret('login failed for hunter22', 'mysql://me:hunter22@h/db')).toBe('login failed for ***')
  })
})

describe('deltaBound', () => {
  const since = Date.UTC(2024, 0, 15, 9, 0, 0, 500)
  it.each([
    { format: 'epoch-s' as const, engine: 'postgres' as const, want: 1705309200 },
    { format: 'epoch-ms' as const, engine: 'postgres' as const, want: since },
    { format: 'epoch-us' as const, engine: 'postgres' as const, want: since * 1000 },
    { format: 'iso' as const, engine: 'sqlite' as const, want: '2024-01-15T09:00:00.500Z' },
    { format: 'auto' as const, engine: 'postgres' as const, want: '2024-01-15T09:00:00.500Z' },
    { format: 'auto' as const, engine: 'mysql' as const, want: '2024-01-15 09:00:00.500' },
  ])('$format on $engine', ({ format, engine, want }) => expect(deltaBound(since, format, engine)).toBe(want))
})
