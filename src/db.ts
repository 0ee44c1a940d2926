/**
 * One way to open a Postgres database with kysely, whether it is a server (`postgres://…`) or the
 * embedded PGlite store in a directory (no server to install). Both the ledger and the sandbox
 * open their databases through here, so the same kysely code runs on both.
 */
import { mkdirSync } from 'node:fs'

import { Kysely, PGliteDialect, PostgresDialect } from 'kysely'
import pg from 'pg'

// BIGINT and NUMERIC come back as strings by default; the counts and ids chatferry stores fit in a
// double, and the ledger never stores larger ones.
pg.types.setTypeParser(20, (v) => Number(v))

export type DatabaseLocation =
  /** A Postgres server. */
  | { readonly url: string; readonly poolSize?: number }
  /**
   * An embedded PGlite database in this directory (created when missing); `memory://` keeps it in
   * memory. `template`: a data-directory tarball (src/db-template.ts) a new directory starts from.
   */
  | { readonly dir: string; readonly template?: Blob }

export interface OpenedDatabase<DB> {
  readonly db: Kysely<DB>
  /** True for PGlite: one connection, one process. */
  readonly embedded: boolean
  /** The pg pool, for code that needs raw pg (pg-boss, COPY); absent for PGlite. */
  readonly pool?: pg.Pool
  /** The PGlite instance; absent for a server. */
  readonly pglite?: import('@electric-sql/pglite').PGlite
  close(): Promise<void>
}

export async function openDatabase<DB>(location: DatabaseLocation): Promise<OpenedDatabase<DB>> {
  if ('url' in location) {
    const pool = new pg.Pool({ connectionString: location.url, max: location.poolSize ?? 10 })
    // An idle client's error (server restart) must not crash the process; the next query reports it.
    pool.on('error', () => {})
    const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool }) })
    return { db, embedded: false, pool, close: () => db.destroy() }
  }
  const { PGlite } = await import('@electric-sql/pglite')
  if (location.dir !== 'memory://') {
    mkdirSync(location.dir, { recursive: true })
  }
  const options = location.template !== undefined ? { loadDataDir: location.template } : {}
  const pglite = location.dir === 'memory://' ? new PGlite(options) : new PGlite(location.dir, options)
  await pglite.waitReady
  const db = new Kysely<DB>({ dialect: new PGliteDialect({ pglite }) })
  return {
    db,
    embedded: true,
    pglite,
    close: async () => {
      await db.destroy()
      if (!pglite.closed) {
        await pglite.close()
      }
    },
  }
}
