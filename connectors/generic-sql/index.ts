/**
 * The generic SQL connector: reads an in-house schema through one plain SELECT per entity that
 * returns the canonical columns (README.md), on Postgres, MySQL/MariaDB or SQLite. Each query is
 * wrapped as a subquery and paged by its key columns inside one read-only snapshot. Each query's
 * text is checked before the source is opened and its columns probed (with `LIMIT 0`) when the
 * session opens, before any row is read (`prepare.ts`). The session is the shared SQL session over
 * the table of the prepared queries (`entity-table.ts`).
 */
import type { SourceConnector } from '../../src/model/connector.ts'
import { openSqlSession } from '../sql/session.ts'
import type { GenericSqlConfig } from './config.ts'
import { genericSqlTable } from './entity-table.ts'
import { genericSqlFilesReader } from './files.ts'
import { genericSqlGroupActivity } from './group-activity.ts'
import { checkQueryTexts, prepare } from './prepare.ts'

export { type GenericSqlConfig, type GenericSqlConfigInput, GenericSqlConfigSchema } from './config.ts'

/** The generic SQL connector for these settings. */
export function createGenericSqlConnector(config: GenericSqlConfig): SourceConnector {
  const files = config.files
  return {
    id: 'generic-sql',
    async open() {
      checkQueryTexts(config)
      return openSqlSession(config, async (conn) => {
        const entities = await prepare(conn, config)
        return {
          table: genericSqlTable(conn, entities, config.files),
          groupActivity: (options) => genericSqlGroupActivity(conn, entities, options),
        }
      })
    },
    ...(files === undefined ? {} : { files: () => genericSqlFilesReader(files) }),
  }
}
