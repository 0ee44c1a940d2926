/**
 * A new embedded ledger starts from the cached template (src/db-template.ts, src/state/store.ts):
 * the first new `state.dir` writes it, later ones load it (proved with a marker table planted in
 * the template), a damaged template falls back to creating the database from scratch without
 * touching what the directory held before, and an existing ledger never meets the template.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { PGlite } from '@electric-sql/pglite'
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'

let cache = ''
let base = ''
const saved = process.env.CHATFERRY_LEDGER_CACHE

beforeAll(() => {
  base = mkdtempSync(join(tmpdir(), 'cf-ledger-template-'))
  cache = join(base, 'cache')
  process.env.CHATFERRY_LEDGER_CACHE = cache
})

afterAll(() => {
  if (saved === undefined) {
    delete process.env.CHATFERRY_LEDGER_CACHE
  } else {
    process.env.CHATFERRY_LEDGER_CACHE = saved
  }
})

/** The tables of schema `public` in the ledger at `dir` (the marker lives there), and whether its jobs table answers. */
async function inspect(dir: string): Promise<{ publicTables: string[]; jobs: number }> {
  const store = await openLedger({ dir })
  try {
    const db = inspectLedger(store)
    const tables = await sql<{ t: string }>`select table_name as t from information_schema.tables where table_schema = 'public'`.execute(db)
    const jobs = await db.selectFrom('chatferry.jobs').select(db.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
    return { publicTables: tables.rows.map((r) => r.t), jobs: Number(jobs.n) }
  } finally {
    await store.close()
  }
}

const templates = () => (existsSync(cache) ? readdirSync(cache).filter((f) => f.endsWith('.tar.gz')) : [])

it('the first new ledger writes the template, the next one starts from it', async () => {
  expect(templates()).toEqual([])
  expect(await inspect(join(base, 'first'))).toEqual({ publicTables: [], jobs: 0 })
  const [name] = templates()
  expect(name).toMatch(/^pglite-[\d.]+-[0-9a-f]{16}\.tar\.gz$/)

  // Plant a marker in the template: a ledger made from it has the marker, one made by initdb has not.
  const pglite = new PGlite({
    loadDataDir: new Blob([new Uint8Array(readFileSync(join(cache, name as string)))]),
  })
  await pglite.exec('create table template_marker (x int)')
  writeFileSync(join(cache, name as string), new Uint8Array(await (await pglite.dumpDataDir('gzip')).arrayBuffer()))
  await pglite.close()

  expect(await inspect(join(base, 'second'))).toEqual({ publicTables: ['template_marker'], jobs: 0 })
  // An existing ledger is opened as it is, whatever the template holds.
  expect(await inspect(join(base, 'first'))).toEqual({ publicTables: [], jobs: 0 })
}, 120_000)

it('a damaged template: the ledger is created from scratch, and what the directory held stays', async () => {
  const [name] = templates()
  expect(name).toBeDefined()
  writeFileSync(join(cache, name as string), 'not a tarball')
  const dir = join(base, 'damaged')
  mkdirSync(dir)
  writeFileSync(join(dir, 'operator-notes.txt'), 'kept')
  expect(await inspect(dir)).toEqual({ publicTables: [], jobs: 0 })
  expect(existsSync(join(dir, 'operator-notes.txt'))).toBe(true)
  expect(existsSync(join(dir, 'PG_VERSION'))).toBe(true)
}, 120_000)
