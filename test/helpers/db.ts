/**
 * A fresh Postgres database per test file, on the server global-setup found, dropped afterwards
 * unless a test failed (so the state stays behind for inspection). Its URL carries a marked test
 * password, and its ledger's text is recorded for the secret scan when it is dropped.
 */
import { randomBytes } from 'node:crypto'

import pg from 'pg'
import { inject } from 'vitest'

import { recordOutput, withTestPassword } from './secrets.ts'

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

/**
 * The ledger's text a person or a report could see (run errors and stats, item and batch errors,
 * stored reports), recorded for the suite's secret scan before the database goes.
 */
async function recordLedgerText(url: string, name: string): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const has = await c.query<{ t: string | null }>(`select to_regclass('chatferry.runs')::text as t`)
    if (has.rows[0]?.t == null) {
      return
    }
    const parts: string[] = []
    for (const q of [
      `select coalesce(error, '') || ' ' || stats::text as t from chatferry.runs`,
      `select coalesce(last_error_code, '') || ' ' || last_error_message as t from chatferry.items where last_error_message is not null`,
      `select coalesce(error_code, '') || ' ' || error_message as t from chatferry.batches where error_message is not null`,
      `select report::text as t from chatferry.reports`,
    ]) {
      const r = await c.query<{ t: string }>(q).catch(() => ({ rows: [] as { t: string }[] }))
      parts.push(...r.rows.map((row) => row.t))
    }
    recordOutput(`ledger-${name}`, parts.join('\n'))
  } finally {
    await c.end()
  }
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
  const db = await createNamedDatabase(serverUrl, prefix, exec, {
    create: (name) => `create database ${name}`,
    drop: (name) => `drop database if exists ${name} with (force)`,
  })
  // A password the server never asks for (trust), so a leaked database password shows in the scan.
  const url = withTestPassword(db.url)
  return {
    url,
    name: db.name,
    async drop() {
      await recordLedgerText(url, db.name).catch(() => {})
      await db.drop()
    },
  }
}
