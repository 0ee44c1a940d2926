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

export async function createTestDatabase(prefix = 'cf'): Promise<TestDatabase> {
  const serverUrl = inject('postgresUrl')
  const name = `${prefix}_${randomBytes(6).toString('hex')}`
  const admin = new pg.Client({ connectionString: serverUrl })
  await admin.connect()
  try {
    await admin.query(`create database ${name}`)
  } finally {
    await admin.end()
  }
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    name,
    async drop() {
      const c = new pg.Client({ connectionString: serverUrl })
      await c.connect()
      try {
        await c.query(`drop database if exists ${name} with (force)`)
      } finally {
        await c.end()
      }
    },
  }
}
