/**
 * The Mattermost connector: reads a Mattermost database directly, on Postgres (lowercase schema)
 * or MySQL/MariaDB (CamelCase schema), in one read-only snapshot, and turns it into the canonical
 * model. Entity order: users → groups (channels) → members → messages. The session is the shared
 * SQL session over Mattermost's entity table (`sql/entity-table.ts`). See README.md for how each
 * Mattermost quirk is mapped.
 */
import { ChatferryError } from '../../src/errors.ts'
import type { SourceConnector } from '../../src/model/connector.ts'
import { fileSourceReader } from '../files/source-reader.ts'
import { openSqlSession } from '../sql/session.ts'
import type { SnapshotConnection } from '../sql/snapshot-connection.ts'
import { describeSource } from '../sql/source-url.ts'
import type { MattermostConfig } from './config.ts'
import { mattermostTable } from './sql/entity-table.ts'
import { mattermostGroupActivity } from './sql/group-activity.ts'
import { teamScope } from './sql/team-scope.ts'

export { type MattermostConfig, type MattermostConfigInput, MattermostConfigSchema } from './config.ts'

/** A `team:` the database does not have would read nothing: refused (SOURCE_INVALID, exit 2). */
async function refuseUnknownTeam(conn: SnapshotConnection, team: string, url: string): Promise<void> {
  const r = await conn.query(teamScope(conn.dialect, team).teamCount, [], 'looking up the team')
  if (Number(r.rows[0]?.n ?? 0) === 0) {
    throw new ChatferryError('SOURCE_INVALID', `source.team: the Mattermost database (${describeSource(url)}) has no team named ${team}`)
  }
}

/** The Mattermost connector for these settings. */
export function createMattermostConnector(config: MattermostConfig): SourceConnector {
  const files = config.files
  return {
    id: 'mattermost',
    open: () =>
      openSqlSession(config, async (conn) => {
        if (config.team !== undefined) {
          await refuseUnknownTeam(conn, config.team, config.url)
        }
        return { table: mattermostTable(conn, config), groupActivity: (options) => mattermostGroupActivity(conn, options) }
      }),
    ...(files === undefined
      ? {}
      : {
          files: () =>
            fileSourceReader(files, 'source.files', "Mattermost's data directory (FileSettings.Directory), where FileInfo.Path is relative to"),
        }),
  }
}
