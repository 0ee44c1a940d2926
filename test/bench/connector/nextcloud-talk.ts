/**
 * Nextcloud Talk for the connector benchmark, on both engines it runs on: the grown fixture of
 * test/fixtures/nextcloud-talk/generate.ts in `cf_bench_nc_<size>`, kept between runs.
 * - `--system nextcloud-talk`: MariaDB (Nextcloud's usual engine), on `TEST_MYSQL_URL` (or
 *   root@127.0.0.1:3306). Raw: the connector's own message SELECT, unpaged, streamed through the
 *   same `mysql2` driver (rows and bytes counted, nothing decoded into records); MariaDB has no COPY.
 * - `--system nextcloud-talk-postgres`: Postgres, on the bench server of the other SQL systems.
 *   Raw: `COPY (<the same SELECT>) TO STDOUT` (raw-copy.ts), as for Mattermost and Zulip.
 */
import { messagesQuery, roomTypes } from '../../../connectors/nextcloud-talk/sql/queries.ts'
import { ncSchema, type NcTable, OPTIONAL_COLUMNS } from '../../../connectors/nextcloud-talk/sql/tables.ts'
import { DIALECTS } from '../../../connectors/sql/dialect.ts'
import { largeBase, largeComments, type LargeSeedOptions } from '../../fixtures/nextcloud-talk/generate.ts'
import { type FixtureEngine, loadNextcloudFixture, openFixtureWriter } from '../../fixtures/nextcloud-talk/load.ts'
import { benchDbUrl, ensureBenchDb } from '../mattermost-bench-db.ts'
import { rawCopy } from './raw-copy.ts'
import type { ConnectorBenchSystem, RawRead } from './system.ts'

const SERVER = process.env.TEST_MYSQL_URL ?? 'mysql://root@127.0.0.1:3306/test'
const PREFIX = 'oc_'
const CHUNK = 5000

const dbName = (size: number) => `cf_bench_nc_${size}`

function dbUrl(size: number): string {
  const u = new URL(SERVER)
  u.pathname = `/${dbName(size)}`
  return u.toString()
}

/** Comments to generate so that `size` of them are messages (every tenth from the 18th is a reaction). */
export function commentsFor(size: number): number {
  let n = size
  while (n - Math.max(0, Math.floor((n - 8) / 10)) < size) {
    n++
  }
  return n
}

const seedOptions = (size: number): LargeSeedOptions => ({ comments: commentsFor(size), users: 200, groupRooms: 60 })

/** The connector's message SELECT on `engine`, unpaged (the fixture has every optional column, as the connector's probe finds). */
function messagesSelect(engine: FixtureEngine): string {
  const all = new Map(Object.entries(OPTIONAL_COLUMNS).map(([table, columns]) => [table as NcTable, new Set(columns)]))
  const q = messagesQuery(ncSchema(DIALECTS[engine], PREFIX, all), roomTypes({ changelog: 'skip', noteToSelf: 'skip' }).messages)
  return `SELECT ${q.select} FROM ${q.from} WHERE ${q.where.join(' AND ')} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}`
}

/** Fills the empty database at `url` with the fixture of `size` messages. */
async function generate(engine: FixtureEngine, url: string, size: number): Promise<void> {
  const o = seedOptions(size)
  process.stdout.write(`generating ${o.comments.toLocaleString('en')} comments into ${dbName(size)} (${engine})… `)
  const started = performance.now()
  await loadNextcloudFixture(engine, url, { prefix: PREFIX, seed: largeBase(o) })
  const w = await openFixtureWriter(engine, url, PREFIX)
  try {
    for (let from = 0; from < o.comments; from += CHUNK) {
      const { comments, reactions } = largeComments(o, from, Math.min(o.comments, from + CHUNK))
      await w.insert('comments', comments)
      await w.insert('reactions', reactions)
    }
    await w.exec(
      engine === 'mysql' ? `ANALYZE TABLE \`${PREFIX}comments\`, \`${PREFIX}talk_rooms\`` : `ANALYZE "${PREFIX}comments", "${PREFIX}talk_rooms"`,
    )
  } finally {
    await w.close()
  }
  process.stdout.write(`${((performance.now() - started) / 1000).toFixed(1)} s\n`)
}

async function admin<T>(f: (c: import('mysql2/promise').Connection) => Promise<T>): Promise<T> {
  const mysql = await import('mysql2/promise')
  const c = await mysql.createConnection({ uri: SERVER })
  try {
    return await f(c)
  } finally {
    await c.end()
  }
}

async function prepare(size: number, regenerate: boolean): Promise<void> {
  const name = dbName(size)
  const kept = await admin(async (c) => {
    try {
      const [rows] = await c.query(`SELECT count(*) AS n FROM \`${name}\`.\`${PREFIX}comments\` WHERE id >= 1000`)
      return Number((rows as { n: number }[])[0]?.n) === seedOptions(size).comments
    } catch {
      return false
    }
  })
  if (kept && !regenerate) {
    return
  }
  await admin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS \`${name}\``)
    await c.query(`CREATE DATABASE \`${name}\` CHARACTER SET utf8mb4 COLLATE utf8mb4_bin`)
  })
  await generate('mysql', dbUrl(size), size)
}

async function raw(size: number): Promise<RawRead> {
  const sql = messagesSelect('mysql')
  const mysql = await import('mysql2')
  // The callback API streams rows one by one: nothing is held.
  const conn = mysql.createConnection({ uri: dbUrl(size), dateStrings: true, supportBigNumbers: true, charset: 'utf8mb4' })
  const run = (text: string) => new Promise<void>((resolve, reject) => conn.query(text, (err) => (err ? reject(err) : resolve())))
  const started = performance.now()
  let rows = 0
  let bytes = 0
  try {
    await run('START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY')
    await new Promise<void>((resolve, reject) => {
      conn
        .query({ sql, rowsAsArray: true })
        .on('result', (row: unknown[]) => {
          rows++
          for (const v of row) {
            bytes += typeof v === 'string' ? Buffer.byteLength(v) : 8
          }
        })
        .on('error', reject)
        .on('end', () => resolve())
    })
    await run('COMMIT')
  } finally {
    await new Promise<void>((resolve) => conn.end(() => resolve()))
  }
  return { rows, bytes, ms: performance.now() - started }
}

const nextcloudTalk: ConnectorBenchSystem = {
  label: 'Nextcloud Talk chat comments on MariaDB',
  rawName: 'raw SELECT (mysql2, streamed)',
  prepare,
  raw,
  sourceConfig: (size, pageSize) => ({ connector: 'nextcloud-talk', url: dbUrl(size), pageSize }),
}
export default nextcloudTalk

/** The same fixture on Postgres, read raw by COPY. */
export const onPostgres: ConnectorBenchSystem = {
  label: 'Nextcloud Talk chat comments on Postgres',
  rawName: 'raw COPY',
  prepare: (size, regenerate) =>
    ensureBenchDb(
      dbName(size),
      regenerate,
      async (c) => (await c.query(`SELECT count(*)::int AS n FROM "${PREFIX}comments" WHERE id >= 1000`)).rows[0]?.n === seedOptions(size).comments,
      (url) => generate('postgres', url, size),
    ).then(() => undefined),
  raw: (size) => rawCopy(benchDbUrl(dbName(size)), messagesSelect('postgres')),
  sourceConfig: (size, pageSize) => ({ connector: 'nextcloud-talk', url: benchDbUrl(dbName(size)), pageSize }),
}
