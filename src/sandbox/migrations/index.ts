/** Every migration of the sandbox store, by name; the names sort in the order they run. */
import type { Migration } from 'kysely/migration'

import * as createSandboxTables from './2026_11_21_1600_create_sandbox_tables.ts'
import * as requestLogItems from './2026_11_24_0600_request_log_items.ts'
import * as webhooksAsPublished from './2026_11_24_0700_webhooks_as_published.ts'
import * as chatWrites from './2026_11_26_0900_chat_writes.ts'
import * as extensionsAndTeam from './2026_11_26_1200_extensions_and_team.ts'

export const SANDBOX_MIGRATIONS: Record<string, Migration> = {
  '2026_11_21_1600_create_sandbox_tables': createSandboxTables,
  '2026_11_24_0600_request_log_items': requestLogItems,
  '2026_11_24_0700_webhooks_as_published': webhooksAsPublished,
  '2026_11_26_0900_chat_writes': chatWrites,
  '2026_11_26_1200_extensions_and_team': extensionsAndTeam,
}
