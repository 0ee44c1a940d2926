/**
 * Finds the real databases the integration tests run against, once per test run:
 * 1. `TEST_DATABASE_URL` / `TEST_MYSQL_URL` when set (CI, or your own servers);
 * 2. otherwise the local services on their standard ports, when they answer;
 * 3. otherwise containers started with testcontainers (needs a Docker engine); without one,
 *    the MariaDB cases are skipped with the reason (Postgres is required).
 * The URLs reach the tests through `provide`/`inject`.
 *
 * It also owns the secret scan: setup clears the recorded outputs, teardown scans everything the
 * run wrote (test/helpers/secrets.ts) and fails the run when a test secret appears in any of it.
 * And the run's temporary files: setup points `TMPDIR` at one fresh directory, which the test
 * processes and every CLI process they start inherit, and teardown removes it once scanned (kept
 * when the scan found a leak, or with `CHATFERRY_KEEP_TEST_TMP=1`). A run used to leave some 360
 * directories, 2 GB, in the system's temporary directory.
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import type { TestProject } from 'vitest/node'

import { buildCliBundle } from './helpers/cli-bundle.ts'
import { OUTPUTS_DIR, scanForLeaks } from './helpers/secrets.ts'

declare module 'vitest' {
  export interface ProvidedContext {
    postgresUrl: string
    mysqlUrl: string | undefined
  }
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 })
  try {
    await client.connect()
    await client.query('select 1')
    return true
  } catch {
    return false
  } finally {
    await client.end().catch(() => {})
  }
}

async function mysqlAnswers(url: string): Promise<boolean> {
  try {
    const mysql = await import('mysql2/promise')
    const conn = await mysql.createConnection({ uri: url, connectTimeout: 2000 })
    await conn.end()
    return true
  } catch {
    return false
  }
}

const stops: (() => Promise<unknown>)[] = []
let startedAt = Date.now()
/** This run's temporary directory, the `TMPDIR` it replaced, and how many setups share it (one per project). */
let runTmp: { dir: string; before: string | undefined; users: number } | undefined

export async function setup(project: TestProject): Promise<void> {
  startedAt = Date.now()
  rmSync(OUTPUTS_DIR, { recursive: true, force: true })
  runTmp ??= { dir: mkdtempSync(join(tmpdir(), 'chatferry-tests-')), before: process.env.TMPDIR, users: 0 }
  runTmp.users++
  process.env.TMPDIR = runTmp.dir
  // Every CLI process of the run starts from this bundle (test/helpers/cli-bundle.ts).
  const bundled = buildCliBundle()
  let postgresUrl = process.env.TEST_DATABASE_URL
  if (!postgresUrl) {
    const local = 'postgres://postgres@127.0.0.1:5432/postgres'
    if (await answers(local)) {
      postgresUrl = local
    } else {
      try {
        const { PostgreSqlContainer } = await import('@testcontainers/postgresql')
        const container = await new PostgreSqlContainer('postgres:16-alpine').start()
        stops.push(() => container.stop())
        postgresUrl = container.getConnectionUri()
      } catch (err) {
        throw new Error(
          'no Postgres for the integration tests: set TEST_DATABASE_URL, run one on 127.0.0.1:5432 (user postgres), ' +
            `or start a Docker engine for testcontainers (${(err as Error).message.split('\n')[0]})`,
          { cause: err },
        )
      }
    }
  }
  project.provide('postgresUrl', postgresUrl)

  let mysqlUrl = process.env.TEST_MYSQL_URL
  if (!mysqlUrl) {
    const local = 'mysql://root@127.0.0.1:3306/test'
    if (await mysqlAnswers(local)) {
      mysqlUrl = local
    } else {
      // No MariaDB here: start one when a Docker engine answers; otherwise the MariaDB cases are
      // skipped and say why.
      try {
        const { MariaDbContainer } = await import('@testcontainers/mariadb')
        const container = await new MariaDbContainer('mariadb:10.11').withDatabase('test').start()
        stops.push(() => container.stop())
        mysqlUrl = container.getConnectionUri(true).replace(/^mariadb:/, 'mysql:')
      } catch (err) {
        process.stderr.write(
          `no MariaDB found (TEST_MYSQL_URL, 127.0.0.1:3306, Docker): MariaDB cases will be skipped (${(err as Error).message.split('\n')[0]})\n`,
        )
      }
    }
  }
  project.provide('mysqlUrl', mysqlUrl)
  await bundled
}

export async function teardown(): Promise<void> {
  for (const stop of stops) {
    await stop()
  }
  const leaks = scanForLeaks(startedAt)
  if (leaks.length > 0) {
    throw new Error(
      `test secrets leaked into ${leaks.length} output(s) of this run:\n` + leaks.map((l) => `  ${l.file}: ${l.secrets.join(', ')}`).join('\n'),
    )
  }
  removeRunTmp()
}

/** Removes this run's temporary directory and gives `TMPDIR` back (not with CHATFERRY_KEEP_TEST_TMP=1). */
function removeRunTmp(): void {
  if (runTmp === undefined || --runTmp.users > 0) {
    return
  }
  if (runTmp.before === undefined) {
    delete process.env.TMPDIR
  } else {
    process.env.TMPDIR = runTmp.before
  }
  if (process.env.CHATFERRY_KEEP_TEST_TMP !== '1') {
    rmSync(runTmp.dir, { recursive: true, force: true })
  }
  runTmp = undefined
}
