/**
 * A scratch legacy source for the bad-key tests, on Postgres, MariaDB or SQLite (a fresh database
 * or file each), with a `SELECT count(*)` of its own to check reads against, and a reader that
 * collects a whole read.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import pg from 'pg'

import type { Cursor, RowProblem, SourceSession } from '../../src/model/connector.ts'
import { type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../../src/model/records.ts'
import type { GenericEngine } from '../fixtures/generic-sql/fixture.ts'
import { createTestDatabase } from './db.ts'
import { createMysqlTestDatabase } from './mysql.ts'

/** A scratch source database: its URL, a count of its own, and how to remove it. */
export interface Source {
  readonly url: string
  count(table: string): Promise<number>
  drop(): Promise<void>
}

/** A fresh source: a temporary SQLite file, or a database with a random name on the test Postgres or MariaDB. */
export async function createSource(engine: GenericEngine): Promise<Source> {
  if (engine === 'sqlite') {
    const dir = mkdtempSync(join(tmpdir(), 'cf-keys-'))
    const path = join(dir, 'source.db')
    return {
      url: `sqlite:${path}`,
      async count(table) {
        const db = new DatabaseSync(path, { readOnly: true })
        try {
          return Number((db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n)
        } finally {
          db.close()
        }
      },
      drop: async () => rmSync(dir, { recursive: true, force: true }),
    }
  }
  const db = engine === 'postgres' ? await createTestDatabase('cf_keys') : await createMysqlTestDatabase('cf_keys')
  return {
    url: db.url,
    async count(table) {
      if (engine === 'postgres') {
        const c = new pg.Client({ connectionString: db.url })
        await c.connect()
        try {
          return Number((await c.query(`SELECT count(*) AS n FROM ${table}`)).rows[0].n)
        } finally {
          await c.end()
        }
      }
      const mysql = await import('mysql2/promise')
      const c = await mysql.createConnection({ uri: db.url })
      try {
        const [rows] = await c.query(`SELECT count(*) AS n FROM ${table}`)
        return Number((rows as { n: unknown }[])[0]?.n)
      } finally {
        await c.end()
      }
    },
    drop: () => db.drop(),
  }
}

/** Reads an entity to the end (optionally resuming after `after`): records' legacy ids, the records, problems, cursors. */
export async function readAll(session: SourceSession, entity: LegacyEntity, pageSize: number, after?: Cursor) {
  const records: string[] = []
  const kept: LegacyRecordOf[LegacyEntity][] = []
  const problems: RowProblem[] = []
  const cursors: Cursor[] = []
  for await (const page of session.read(entity, { pageSize, ...(after ? { after } : {}) })) {
    cursors.push(page.cursor)
    for (const row of page.rows) {
      if (row.ok) {
        records.push(legacyIdOf(entity, row.record as never))
        kept.push(row.record)
      } else {
        problems.push(row)
      }
    }
  }
  return { records, kept, problems, cursors }
}

/** Problems in a stable order (field, then legacy id), to compare reads that page differently. */
export const sortProblems = <T extends { legacyId: string; field: string }>(list: readonly T[]) =>
  [...list].sort((a, b) => `${a.field}\u0000${a.legacyId}`.localeCompare(`${b.field}\u0000${b.legacyId}`))
