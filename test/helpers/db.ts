/**
 * A fresh Postgres database per test file, on the server global-setup found, dropped afterwards
 * unless a test failed (so the state stays behind for inspection).
 */
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { inject } from 'vitest'

export interface TestDatabase {
  readonly url: string
  readonly name: string
  drop(): Promise<void>
}

/**
 * Creates `<prefix>_<random>` on `serverUrl` with `sql.create(name)` and returns it with its URL;
 * `drop()` runs `sql.drop(name)`. `exec` runs one statement on a connection of its own, so the
 * server, not a connection of the test, holds the database.
 */
export async function createNamedDatabase(
  serverUrl: string,
  prefix: string,
  exec: (statement: string) => Promise<void>,
  sql: { create(name: string): string; drop(name: string): string },
): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  await exec(sql.create(name))
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return { url: url.toString(), name, drop: () => exec(sql.drop(name)) }
}

export async function createTestDatabase(prefix = 'cf'): Promise<TestDatabase> {
  const serverUrl = inject('postgresUrl')
  const exec = async (statement: string) => {
    const c = new pg.Client({ connectionString: serverUrl })
    await c.connect()
    try {
      await c.query(statement)
    } finally {
      await c.end()
    }
  }
  return createNamedDatabase(serverUrl, prefix, exec, {
    create: (name) => `create database ${name}`,
    drop: (name) => `drop database if exists ${name} with (force)`,
  })
}
