/**
 * The sandbox's Postgres store: the table types of the schema `sandbox`, and opening it (a server,
 * or embedded PGlite) with its migrations applied.
 */

import { type ColumnType, type Generated, Kysely, PGliteDialect } from 'kysely'
import { Migrator } from 'kysely/migration'

import { type DatabaseLocation, openDatabase, type OpenedDatabase } from '../db.ts'
import { readTemplate, saveTemplate, templateFile } from '../db-template.ts'
import { SANDBOX_MIGRATIONS } from './migrations/index.ts'

/** The Postgres schema every sandbox table lives in. */
export const SANDBOX_SCHEMA = 'sandbox'

/** A jsonb column: written as JSON text, read as the parsed value. */
type Json = ColumnType<unknown, string, string>
type JsonOrNull = ColumnType<unknown, string | null, string | null>
/** BIGINT columns come back as numbers (see db.ts). */
type BigInt = ColumnType<number, number, number>
type BigIntOrNull = ColumnType<number | null, number | null | undefined, number | null>
type Identity = ColumnType<number, never, never>

export interface AppsTable {
  id: string
  seq: Identity
  name: string
  region: string
  plan: string
  state: string
  settings: Json
  created_at: BigInt
  scheduled_to_delete_at: BigIntOrNull
}

export interface ApiKeysTable {
  api_key: string
  app_id: string
  name: string
  scope: string
  created_by: string
  created_at: BigInt
}

export interface UsersTable {
  app_id: string
  uid: string
  seq: Identity
  name: string
  avatar: string | null
  link: string | null
  role: string
  metadata: JsonOrNull
  tags: JsonOrNull
  created_at: BigInt
  updated_at: BigInt
  last_active_at: BigIntOrNull
  deactivated_at: BigIntOrNull
  /** Set by `PUT /users/{uid}` only. */
  status_message: ColumnType<string | null, string | null | undefined, string | null>
}

export interface GroupsTable {
  app_id: string
  guid: string
  seq: Identity
  name: string
  type: string
  icon: string | null
  password: string | null
  owner: string | null
  metadata: JsonOrNull
  tags: JsonOrNull
  created_at: BigInt
  updated_at: BigInt
  /** Set by `PUT /groups/{guid}` only (the import has no description). */
  description: ColumnType<string | null, string | null | undefined, string | null>
}

export interface MembersTable {
  app_id: string
  guid: string
  uid: string
  seq: Identity
  scope: string
  is_banned: boolean
  joined_at: BigInt
  created_at: BigInt
}

export interface MessagesTable {
  id: Identity
  app_id: string
  muid: string
  conversation_id: string
  sender: string
  receiver_type: string
  receiver: string
  category: string
  type: string
  data: Json
  tags: JsonOrNull
  sent_at: BigInt
  delivered_at: BigIntOrNull
  read_at: BigIntOrNull
  updated_at: BigInt
  imported_at_ms: BigInt
  /** `PUT /messages/{id}`: when and by whom (`onBehalfOf`, else `app_system`). */
  edited_at: BigIntOrNull
  edited_by: ColumnType<string | null, string | null | undefined, string | null>
  /** `DELETE /messages/{id}` without `permanent`: the soft delete. */
  deleted_at: BigIntOrNull
  deleted_by: ColumnType<string | null, string | null | undefined, string | null>
}

export interface RequestLogTable {
  id: Identity
  app_id: string
  received_at_ms: BigInt
  method: string
  path: string
  endpoint: string
  item_count: number | null
  status: number | null
  code: string | null
  fault: string | null
  committed: number
  latency_ms: number
  duration_ms: number
  /** What the request carried, item by item (request-log.ts `RequestLogItem[]`); null when its body was not read as an import. */
  items: JsonOrNull
}

export interface WebhooksTable {
  app_id: string
  id: string
  seq: Identity
  name: string
  webhook_url: string
  use_basic_auth: boolean
  username: string | null
  password: string | null
  enabled: boolean
  /** `legacy` (created without `X-Webhook-Version: 2`) or `2`. */
  version: string
  retry_on_failure: boolean
  created_at: BigInt
  updated_at: BigInt
}

/** The triggers of a webhook (the documented sub-resource). */
export interface WebhookTriggersTable {
  app_id: string
  webhook_id: string
  trigger_id: string
  seq: Identity
}

export interface WebhookDeliveriesTable {
  id: Generated<number>
  app_id: string
  webhook_id: string
  trigger: string
  payload: Json
  status: string
  http_status: number | null
  attempts: number
  last_error: string | null
  created_at_ms: BigInt
  finished_at_ms: BigIntOrNull
  /** When each attempt started (epoch ms); null on rows written before it existed. */
  attempts_at_ms: JsonOrNull
}

/** Extensions an app has enabled or disabled through the management interface (absent: never set: off). */
export interface AppExtensionsTable {
  app_id: string
  extension_id: string
  enabled: boolean
  updated_at: BigInt
}

/** An app's team members (dashboard collaborators), by email. */
export interface AppCollaboratorsTable {
  app_id: string
  email: string
  seq: Identity
  /** `admin` or `moderator`. */
  role: string
  created_at: BigInt
}

/** The tables of the schema `sandbox`, for kysely. */
export interface SandboxDatabase {
  apps: AppsTable
  api_keys: ApiKeysTable
  users: UsersTable
  groups: GroupsTable
  members: MembersTable
  messages: MessagesTable
  request_log: RequestLogTable
  webhooks: WebhooksTable
  webhook_triggers: WebhookTriggersTable
  webhook_deliveries: WebhookDeliveriesTable
  app_extensions: AppExtensionsTable
  app_collaborators: AppCollaboratorsTable
}

export type SandboxDb = Kysely<SandboxDatabase>

/** An open store. */
export interface SandboxStore {
  /** Queries against the schema `sandbox` (table names unqualified). */
  readonly db: SandboxDb
  readonly opened: OpenedDatabase<SandboxDatabase>
  close(): Promise<void>
}

/**
 * The migrated, empty in-memory store's template (src/db-template.ts): what lets `chatferry
 * sandbox` start in well under 2 s after its first run. `CHATFERRY_SANDBOX_CACHE` moves it;
 * `CHATFERRY_SANDBOX_CACHE=off` turns it off.
 */
const sandboxTemplateFile = () => templateFile('CHATFERRY_SANDBOX_CACHE', 'chatferry-sandbox', Object.keys(SANDBOX_MIGRATIONS))

/** An in-memory PGlite store, from the cached template when there is one. */
async function openMemoryStore(): Promise<OpenedDatabase<SandboxDatabase>> {
  const { PGlite } = await import('@electric-sql/pglite')
  const file = sandboxTemplateFile()
  let template = readTemplate(file)
  let pglite = template ? new PGlite({ loadDataDir: template }) : new PGlite()
  try {
    await pglite.waitReady
  } catch {
    // A damaged template: start from scratch.
    pglite = new PGlite()
    await pglite.waitReady
    template = undefined
  }
  const db = new Kysely<SandboxDatabase>({ dialect: new PGliteDialect({ pglite }) })
  const opened: OpenedDatabase<SandboxDatabase> = {
    db,
    embedded: true,
    pglite,
    close: async () => {
      await db.destroy()
      if (!pglite.closed) {
        await pglite.close()
      }
    },
  }
  if (template === undefined && file) {
    try {
      await migrateSandboxStore(db)
      await saveTemplate(file, pglite)
    } catch {
      // The cache is an optimisation only.
    }
  }
  return opened
}

/** Opens the store and runs the sandbox migrations that have not run yet. */
export async function openSandboxStore(location: DatabaseLocation): Promise<SandboxStore> {
  const opened = 'dir' in location && location.dir === 'memory://' ? await openMemoryStore() : await openDatabase<SandboxDatabase>(location)
  try {
    await migrateSandboxStore(opened.db)
  } catch (err) {
    await opened.close()
    throw err
  }
  return { db: opened.db.withSchema(SANDBOX_SCHEMA), opened, close: () => opened.close() }
}

/** Runs the sandbox migrations (kysely's Migrator with a static provider). */
export async function migrateSandboxStore(db: Kysely<SandboxDatabase>): Promise<void> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => SANDBOX_MIGRATIONS },
    migrationTableSchema: SANDBOX_SCHEMA,
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = results?.find((r: { status: string }) => r.status === 'Error')
    throw new Error(`sandbox store migration ${failed?.migrationName ?? ''} failed: ${(error as Error).message ?? String(error)}`, {
      cause: error,
    })
  }
}

/** JSON text for a jsonb column; null stays null. */
export function toJson(value: unknown): string | null {
  return value === undefined || value === null ? null : JSON.stringify(value)
}
