/**
 * The Zulip connector: reads one realm (organisation) of a Zulip Postgres database directly, in one
 * read-only snapshot, and turns it into the canonical model. Entity order: users → groups (streams
 * or stream topics, and direct-message groups) → members (subscriptions) → messages. The session is
 * the shared SQL session over Zulip's entity table (`sql/entity-table.ts`). See README.md.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { SourceConnector } from '../../src/model/connector.ts'
import { openSqlSession } from '../sql/session.ts'
import type { SnapshotConnection } from '../sql/snapshot-connection.ts'
import type { ZulipConfig } from './config.ts'
import { zulipFilesReader } from './files.ts'
import { zulipTable } from './sql/entity-table.ts'
import { REALM_QUERY, type RealmIds } from './sql/queries.ts'

export { type ZulipConfig, type ZulipConfigInput, ZulipConfigSchema } from './config.ts'

/** Finds the realm's id (and the internal realm's); an unknown `realm` is a configuration error. */
async function resolveRealm(conn: SnapshotConnection, realm: string): Promise<RealmIds> {
  const r = await conn.query(REALM_QUERY, [realm], 'finding the realm')
  const row = r.rows[0] ?? {}
  if (row.realm === null || row.realm === undefined) {
    const known = typeof row.known === 'string' ? row.known : 'none'
    throw new ChatferryError('CONFIG_INVALID', `source.realm: no Zulip realm has string_id ${JSON.stringify(realm)}; the database holds ${known}`)
  }
  return { realm: Number(row.realm), internal: Number(row.internal) }
}

/** The Zulip connector for these settings. */
export function createZulipConnector(config: ZulipConfig): SourceConnector {
  const files = config.files
  return {
    id: 'zulip',
    open: () => openSqlSession(config, async (conn) => ({ table: zulipTable(conn, config, await resolveRealm(conn, config.realm)) })),
    ...(files === undefined ? {} : { files: () => zulipFilesReader(files) }),
  }
}
