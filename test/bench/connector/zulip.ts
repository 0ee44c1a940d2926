/**
 * Zulip (realm `acme` of a generated database) for the connector benchmark. Raw: `COPY (<the
 * connector's own message SELECT, unpaged>) TO STDOUT` through the same `pg` driver (bytes counted,
 * nothing parsed). Generated databases are kept (`cf_bench_zulip_<size>`) and reused.
 */
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'

import { messagesQuery } from '../../../connectors/zulip/sql/queries.ts'
import { FIRST_GENERATED_MESSAGE, generateZulip } from '../../fixtures/zulip/generate.ts'
import { REALM } from '../../fixtures/zulip/seed.ts'
import { benchDbUrl, withBenchAdmin } from '../mattermost-bench-db.ts'
import type { ConnectorBenchSystem, RawRead } from './system.ts'

const dbName = (size: number) => `cf_bench_zulip_${size}`

async function ensureDb(size: number, regenerate: boolean): Promise<void> {
  const name = dbName(size)
  const url = benchDbUrl(name)
  const exists = await withBenchAdmin(async (c) => (await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name])).rowCount === 1)
  if (exists && !regenerate) {
    const c = new pg.Client({ connectionString: url })
    await c.connect()
    try {
      const r = await c.query('SELECT count(*)::int AS n FROM zerver_message WHERE id >= $1', [FIRST_GENERATED_MESSAGE])
      if (r.rows[0]?.n === size) {
        return
      }
    } catch {
      // half-generated: rebuild
    } finally {
      await c.end()
    }
  }
  await withBenchAdmin(async (c) => {
    await c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
    await c.query(`CREATE DATABASE ${name}`)
  })
  process.stdout.write(`generating ${size.toLocaleString('en')} Zulip messages into ${name}… `)
  const g = await generateZulip(url, { messages: size })
  process.stdout.write(`${(g.ms / 1000).toFixed(1)} s\n`)
}

async function rawCopy(url: string): Promise<RawRead> {
  const q = messagesQuery({ realm: REALM.acme, internal: REALM.internal }, { topics: 'metadata', archivedMessages: 'skip' })
  const sql = `COPY (SELECT ${q.select} FROM ${q.from} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}) TO STDOUT`
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const started = performance.now()
  let rows = 0
  let bytes = 0
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    await pipeline(
      client.query(copyTo(sql)),
      new Writable({
        write(chunk: Buffer, _enc, done) {
          bytes += chunk.length
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) {
            rows++
          }
          done()
        },
      }),
    )
    await client.query('COMMIT')
  } finally {
    await client.end()
  }
  return { rows, bytes, ms: performance.now() - started }
}

const zulip: ConnectorBenchSystem = {
  label: 'Zulip messages on Postgres',
  rawName: 'raw COPY',
  prepare: (size, regenerate) => ensureDb(size, regenerate),
  raw: (size) => rawCopy(benchDbUrl(dbName(size))),
  sourceConfig: (size, pageSize) => ({ connector: 'zulip', url: benchDbUrl(dbName(size)), realm: 'acme', pageSize }),
}
export default zulip
