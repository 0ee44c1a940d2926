/** The SQL sources' side of the contract suite: a fresh database, its open connections, a bad URL. */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { inject } from 'vitest'

import type { GenericEngine } from '../fixtures/generic-sql/fixture.ts'
import { createTestDatabase } from './db.ts'
import { createMysqlTestDatabase } from './mysql.ts'

/** The password planted in unreachable URLs: no error may show it. */
export const CONTRACT_PASSWORD = 'S3cretPassw0rd'

export async function createContractDatabase(engine: GenericEngine): Promise<{ url: string; name: string; drop(): Promise<void> }> {
  if (engine === 'postgres') {
    return createTestDatabase('cf_conn')
  }
  if (engine === 'mysql') {
    return createMysqlTestDatabase('cf_conn')
  }
  const dir = mkdtempSync(join(tmpdir(), 'cf-conn-'))
  return { url: `sqlite:${join(dir, 'source.db')}`, name: 'source.db', drop: async () => rmSync(dir, { recursive: true, force: true }) }
}

/** Source connections chatferry holds open on the server for `dbName` (undefined for SQLite). */
export async function countSourceConnections(engine: GenericEngine, dbName: string): Promise<number | undefined> {
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

/** A URL nothing answers on, carrying {@link CONTRACT_PASSWORD}; what its error must name. */
export function unreachableSql(engine: GenericEngine): { url: string; names: string; secret?: string } {
  if (engine === 'postgres') {
    return { url: `postgres://chatferry:${CONTRACT_PASSWORD}@127.0.0.1:1/legacy`, names: '127.0.0.1:1', secret: CONTRACT_PASSWORD }
  }
  if (engine === 'mysql') {
    return { url: `mysql://chatferry:${CONTRACT_PASSWORD}@127.0.0.1:1/legacy`, names: '127.0.0.1:1', secret: CONTRACT_PASSWORD }
  }
  return { url: `sqlite:/nonexistent-${CONTRACT_PASSWORD}-dir/legacy.db`, names: 'legacy.db' }
}

/** Why a MariaDB case cannot run here, or undefined. */
export function noMysqlReason(engine: GenericEngine): string | undefined {
  return engine === 'mysql' && inject('mysqlUrl') === undefined
    ? 'no MySQL/MariaDB server — set TEST_MYSQL_URL or start MariaDB on 127.0.0.1:3306'
    : undefined
}
