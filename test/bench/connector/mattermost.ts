/**
 * Mattermost on Postgres for the connector benchmark. Raw: `COPY (<the connector's own message
 * SELECT, unpaged>) TO STDOUT` through the same `pg` driver (bytes counted, nothing parsed).
 * Generated databases are kept (`cf_bench_mm_<size>`) and reused.
 */
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'

import { messagesQuery } from '../../../connectors/mattermost/sql/queries.ts'
import { DIALECTS } from '../../../connectors/sql/dialect.ts'
import { benchDbUrl, ensureMattermostBenchDb } from '../mattermost-bench-db.ts'
import type { ConnectorBenchSystem, RawRead } from './system.ts'

async function rawCopy(url: string): Promise<RawRead> {
  const q = messagesQuery(DIALECTS.postgres)
  const sql = `COPY (SELECT ${q.select} FROM ${q.from} WHERE ${q.where.join(' AND ')} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}) TO STDOUT`
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

const mattermost: ConnectorBenchSystem = {
  label: 'Mattermost messages on Postgres',
  rawName: 'raw COPY',
  prepare: (size, regenerate) => ensureMattermostBenchDb(size, regenerate).then(() => undefined),
  raw: (size) => rawCopy(benchDbUrl(`cf_bench_mm_${size}`)),
  sourceConfig: (size, pageSize) => ({ connector: 'mattermost', url: benchDbUrl(`cf_bench_mm_${size}`), pageSize }),
}
export default mattermost
