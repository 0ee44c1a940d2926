/**
 * Zulip (realm `acme` of a generated database) for the connector benchmark. Raw: `COPY (<the
 * connector's own message SELECT, unpaged>) TO STDOUT` through the same `pg` driver (bytes counted,
 * nothing parsed). Generated databases are kept (`cf_bench_zulip_<size>`) and reused.
 */
import { messagesQuery } from '../../../connectors/zulip/sql/queries.ts'
import { FIRST_GENERATED_MESSAGE, generateZulip } from '../../fixtures/zulip/generate.ts'
import { REALM } from '../../fixtures/zulip/seed.ts'
import { benchDbUrl, ensureBenchDb } from '../mattermost-bench-db.ts'
import { rawCopy } from './raw-copy.ts'
import type { ConnectorBenchSystem } from './system.ts'

const dbName = (size: number) => `cf_bench_zulip_${size}`
const q = messagesQuery({ realm: REALM.acme, internal: REALM.internal }, { topics: 'metadata', archivedMessages: 'skip' })

const zulip: ConnectorBenchSystem = {
  label: 'Zulip messages on Postgres',
  rawName: 'raw COPY',
  prepare: (size, regenerate) =>
    ensureBenchDb(
      dbName(size),
      regenerate,
      async (c) => (await c.query('SELECT count(*)::int AS n FROM zerver_message WHERE id >= $1', [FIRST_GENERATED_MESSAGE])).rows[0]?.n === size,
      async (url) => {
        process.stdout.write(`generating ${size.toLocaleString('en')} Zulip messages into ${dbName(size)}… `)
        const g = await generateZulip(url, { messages: size })
        process.stdout.write(`${(g.ms / 1000).toFixed(1)} s\n`)
      },
    ).then(() => undefined),
  raw: (size) => rawCopy(benchDbUrl(dbName(size)), `SELECT ${q.select} FROM ${q.from} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}`),
  sourceConfig: (size, pageSize) => ({ connector: 'zulip', url: benchDbUrl(dbName(size)), realm: 'acme', pageSize }),
}
export default zulip
