/**
 * The raw read of the SQL systems: `COPY (<sql>) TO STDOUT` through the same `pg` driver inside one
 * read-only snapshot, counting rows and bytes, parsing nothing.
 */
import { Writable } from 'node:stream'
import { pipeline } from 'node:stream/promises'

import pg from 'pg'
import { to as copyTo } from 'pg-copy-streams'

import type { RawRead } from './system.ts'

export async function rawCopy(url: string, select: string): Promise<RawRead> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  const started = performance.now()
  let rows = 0
  let bytes = 0
  try {
    await client.query('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY')
    await pipeline(
      client.query(copyTo(`COPY (${select}) TO STDOUT`)),
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
