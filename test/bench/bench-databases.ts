/**
 * Fresh Postgres databases for a benchmark, on $BENCH_DATABASE_URL (else the local server), each
 * dropped by `dropAll` at the end.
 */
import { randomBytes } from 'node:crypto'

import pg from 'pg'

export const BENCH_SERVER_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres'

export interface BenchDatabases {
  /** Creates `<prefix>_<random>`; returns its URL. */
  fresh(prefix: string): Promise<string>
  dropAll(): Promise<void>
}

export function benchDatabases(serverUrl = BENCH_SERVER_URL): BenchDatabases {
  const names: string[] = []
  const exec = async (statement: string) => {
    const c = new pg.Client({ connectionString: serverUrl })
    await c.connect()
    try {
      await c.query(statement)
    } finally {
      await c.end()
    }
  }
  return {
    async fresh(prefix) {
      const name = `${prefix}_${randomBytes(4).toString('hex')}`
      await exec(`create database ${name}`)
      names.push(name)
      const url = new URL(serverUrl)
      url.pathname = `/${name}`
      return url.toString()
    },
    async dropAll() {
      for (const name of names.splice(0)) {
        await exec(`drop database if exists ${name} with (force)`).catch(() => {})
      }
    },
  }
}
