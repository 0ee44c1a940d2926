/**
 * Mattermost on Postgres for the connector benchmark. Raw: `COPY (<the connector's own message
 * SELECT, unpaged>) TO STDOUT` through the same `pg` driver (bytes counted, nothing parsed).
 * Generated databases are kept (`cf_bench_mm_<size>`) and reused.
 */
import { messagesQuery } from '../../../connectors/mattermost/sql/queries.ts'
import { DIALECTS } from '../../../connectors/sql/dialect.ts'
import { benchDbUrl, ensureMattermostBenchDb } from '../mattermost-bench-db.ts'
import { rawCopy } from './raw-copy.ts'
import type { ConnectorBenchSystem } from './system.ts'

const q = messagesQuery(DIALECTS.postgres)

const mattermost: ConnectorBenchSystem = {
  label: 'Mattermost messages on Postgres',
  rawName: 'raw COPY',
  prepare: (size, regenerate) => ensureMattermostBenchDb(size, regenerate).then(() => undefined),
  raw: (size) =>
    rawCopy(
      benchDbUrl(`cf_bench_mm_${size}`),
      `SELECT ${q.select} FROM ${q.from} WHERE ${q.where.join(' AND ')} ORDER BY ${q.keys.map((k) => k.expr).join(', ')}`,
    ),
  sourceConfig: (size, pageSize) => ({ connector: 'mattermost', url: benchDbUrl(`cf_bench_mm_${size}`), pageSize }),
}
export default mattermost
