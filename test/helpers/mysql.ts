/**
 * A fresh MySQL/MariaDB database per test file, on the server global-setup found (`mysqlUrl`),
 * dropped afterwards. Tests that need it skip when `inject('mysqlUrl')` is undefined.
 */
import { randomBytes } from 'node:crypto'
import { inject } from 'vitest'
import type { TestDatabase } from './db.ts'

/** The MySQL server URL global-setup found, or `undefined` when there is none. */
export function mysqlServerUrl(): string | undefined {
  return inject('mysqlUrl')
}

/** Creates `<prefix>_<random>` on the MySQL server; throws when there is no server. */
export async function createMysqlTestDatabase(prefix = 'cf'): Promise<TestDatabase> {
  const serverUrl = mysqlServerUrl()
  if (serverUrl === undefined) throw new Error('no MySQL/MariaDB server (inject("mysqlUrl") is undefined)')
  return createMysqlDatabaseOn(serverUrl, prefix)
}

/** Same, on an explicit server URL (for scripts outside vitest). */
export async function createMysqlDatabaseOn(serverUrl: string, prefix = 'cf'): Promise<TestDatabase> {
  const mysql = await import('mysql2/promise')
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = await mysql.createConnection({ uri: serverUrl })
  try {
    await admin.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
  } finally {
    await admin.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = await mysql.createConnection({ uri: serverUrl })
      try {
        await c.query(`DROP DATABASE IF EXISTS \`${name}\``)
      } finally {
        await c.end()
      }
    },
  }
}
