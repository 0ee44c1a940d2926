/**
 * A fresh MySQL/MariaDB database per test file, on the server global-setup found (`mysqlUrl`),
 * dropped afterwards. Tests that need it skip when `inject('mysqlUrl')` is undefined.
 */
import { inject } from 'vitest'

import { createNamedDatabase, type TestDatabase } from './db.ts'

/** The MySQL server URL global-setup found, or `undefined` when there is none. */
export function mysqlServerUrl(): string | undefined {
  return inject('mysqlUrl')
}

/** Creates `<prefix>_<random>` on the MySQL server; throws when there is no server. */
export async function createMysqlTestDatabase(prefix = 'cf'): Promise<TestDatabase> {
  const serverUrl = mysqlServerUrl()
  if (serverUrl === undefined) {
    throw new Error('no MySQL/MariaDB server (inject("mysqlUrl") is undefined)')
  }
  return createMysqlDatabaseOn(serverUrl, prefix)
}

/** Same, on an explicit server URL (for scripts outside vitest). */
export async function createMysqlDatabaseOn(serverUrl: string, prefix = 'cf'): Promise<TestDatabase> {
  const mysql = await import('mysql2/promise')
  const exec = async (statement: string) => {
    const c = await mysql.createConnection({ uri: serverUrl })
    try {
      await c.query(statement)
    } finally {
      await c.end()
    }
  }
  return createNamedDatabase(serverUrl, prefix, exec, {
    create: (name) => `CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`,
    drop: (name) => `DROP DATABASE IF EXISTS \`${name}\``,
  })
}
