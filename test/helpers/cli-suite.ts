/**
 * What the tests of the CLI as a process share: a sandbox for the test file and fresh Postgres
 * databases dropped after it (`useCliSuite`), the ledger's rows as plain SQL sees them, and the one
 * JSON object a `--json` command prints.
 */
import pg from 'pg'
import { afterAll, beforeAll, expect } from 'vitest'

import { createTestDatabase, type TestDatabase } from './db.ts'
import { dropWithin } from './loader-harness.ts'
import { startTestSandbox, type TestSandbox } from './sandbox.ts'

export interface CliSuite {
  /** The file's sandbox (started in `beforeAll`). */
  readonly tsb: TestSandbox
  /** A new database, dropped after the file. */
  freshDb(prefix: string): Promise<TestDatabase>
  /** Drops this database (a MariaDB one, say) after the file too. */
  dropAfter(db: TestDatabase): void
}

/** Starts a sandbox before the file's tests and closes it, and drops every fresh database, after them. */
export function useCliSuite(): CliSuite {
  let tsb: TestSandbox | undefined
  const dbs: TestDatabase[] = []
  beforeAll(async () => {
    tsb = await startTestSandbox()
  })
  afterAll(async () => {
    await tsb?.close()
    for (const d of dbs) {
      await dropWithin(d)
    }
  })
  return {
    get tsb() {
      if (tsb === undefined) {
        throw new Error('the sandbox starts in beforeAll: use it inside a test or a hook')
      }
      return tsb
    },
    async freshDb(prefix) {
      const d = await createTestDatabase(prefix)
      dbs.push(d)
      return d
    },
    dropAfter: (db) => void dbs.push(db),
  }
}

async function withClient<T>(url: string, work: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await work(c)
  } finally {
    await c.end()
  }
}

/** How many jobs, runs, items and cursors a Postgres ledger holds (all 0 before its first migration). */
export async function ledgerRows(stateUrl: string): Promise<{ jobs: number; runs: number; items: number; cursors: number }> {
  return withClient(stateUrl, async (c) => {
    const exists = await c.query(`select to_regclass('chatferry.items') as t`)
    if (exists.rows[0]?.t === null) {
      return { jobs: 0, runs: 0, items: 0, cursors: 0 }
    }
    const n = async (table: string) => (await c.query(`select count(*)::int as n from chatferry.${table}`)).rows[0].n as number
    return { jobs: await n('jobs'), runs: await n('runs'), items: await n('items'), cursors: await n('cursors') }
  })
}

export interface RunRow {
  id: number
  mode: string
  status: string
  owner: string | null
  error: string | null
}

/** A job's run rows, oldest first. */
export async function runsOf(stateUrl: string, jobId: string): Promise<RunRow[]> {
  return withClient(stateUrl, async (c) => {
    const r = await c.query('select id::int as id, mode, status, owner, error from chatferry.runs where job_id = $1 order by id', [jobId])
    return r.rows as RunRow[]
  })
}

/** stdout must be exactly one JSON object (one line); returns it. */
export function oneJsonObject(stdout: string): Record<string, unknown> {
  const lines = stdout.split('\n').filter((l) => l.trim() !== '')
  expect(lines, stdout).toHaveLength(1)
  const parsed: unknown = JSON.parse(lines[0] ?? '')
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)).toBe(true)
  return parsed as Record<string, unknown>
}
