/**
 * The Nextcloud Talk connector: reads the Talk tables and the shared comments table of a Nextcloud
 * database (MariaDB/MySQL or Postgres, any table prefix) in one read-only snapshot, and turns them
 * into the canonical model. Entity order: users → groups (group and public conversations) →
 * members (their user attendees) → messages (chat comments). The session is the shared SQL
 * session over Talk's entity table (`sql/entity-table.ts`). See README.md for every mapping.
 */
import type { SourceConnector } from '../../src/model/connector.ts'
import { openSqlSession } from '../sql/session.ts'
import type { NextcloudTalkConfig } from './config.ts'
import { nextcloudFilesReader } from './files.ts'
import { nextcloudTalkTable } from './sql/entity-table.ts'
import { nextcloudGroupActivity } from './sql/group-activity.ts'
import { probeSchema } from './sql/tables.ts'

export { type NextcloudTalkConfig, type NextcloudTalkConfigInput, NextcloudTalkConfigSchema } from './config.ts'

/** The Nextcloud Talk connector for these settings. */
export function createNextcloudTalkConnector(config: NextcloudTalkConfig): SourceConnector {
  const files = config.files
  return {
    id: 'nextcloud-talk',
    open: () =>
      openSqlSession(config, async (conn) => {
        const schema = await probeSchema(conn, config.tablePrefix)
        return {
          table: nextcloudTalkTable(conn, schema, config),
          groupActivity: (options) => nextcloudGroupActivity(conn, schema, config.rooms, options),
        }
      }),
    ...(files === undefined ? {} : { files: () => nextcloudFilesReader(files) }),
  }
}
