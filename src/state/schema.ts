/**
 * kysely types of the ledger tables (schema `chatferry`). Column names are snake_case as in SQL.
 */
import type { ColumnType, Generated } from 'kysely'

export const ITEM_STATUSES = ['planned', 'sent', 'done', 'skipped', 'rejected'] as const
/** Where an item stands: `sent` means "in an open batch, possibly on the wire". */
export type ItemStatus = (typeof ITEM_STATUSES)[number]

export const DONE_REASONS = ['created', 'already_present'] as const
/** Whether `done` means we created it or the platform already had it. */
export type DoneReason = (typeof DONE_REASONS)[number]

export const RUN_MODES = ['plan', 'run', 'delta', 'load', 'worker'] as const
export type RunMode = (typeof RUN_MODES)[number]

/** `interrupted`: stopped by SIGINT/SIGTERM after finishing the work in hand; rerunning resumes. `stopped`: a `worker` ended by SIGINT/SIGTERM, the way a worker is meant to end (and rows written before `interrupted` existed). */
export const RUN_STATUSES = ['running', 'succeeded', 'rejected', 'failed', 'stopped', 'interrupted'] as const
export type RunStatus = (typeof RUN_STATUSES)[number]

export const BATCH_STATUSES = ['open', 'settled', 'split', 'abandoned'] as const
export type BatchStatus = (typeof BATCH_STATUSES)[number]

/**
 * What an update intent asks of the platform (one chat call each, see docs/cutover.md "Changes after
 * the bulk load"). `*.unchangeable` records a change the platform cannot take through its chat
 * interface (a message's sentAt or receiver, a user's uid…): always `reported`, never sent.
 */
export const UPDATE_KINDS = [
  'user.update',
  'user.deactivate',
  'user.reactivate',
  'user.unchangeable',
  'group.update',
  'group.delete',
  'group.unchangeable',
  'member.add',
  'member.scope',
  'member.kick',
  'member.ban',
  'member.unban',
  'member.unchangeable',
  'message.edit',
  'message.delete',
  'message.unchangeable',
] as const
export type UpdateKind = (typeof UPDATE_KINDS)[number]

/** How a kind of change is handled: sent to the platform, only counted in the reports, or dropped from them. */
export const UPDATE_POLICIES = ['apply', 'report', 'ignore'] as const
export type UpdatePolicy = (typeof UPDATE_POLICIES)[number]

/**
 * Where an update intent stands. `planned` waits for the update lane; `sent` is recorded before
 * the call (a crash leaves it `sent` with a lease); `done`/`rejected` are settled from the answer;
 * `reported`/`ignored` are never sent (policy); `superseded` was replaced by a newer planned intent
 * of the same item and kind before it was sent; `conflict` was not applied because the item changed on
 * the platform after chatferry last wrote it (`changes.conflicts: report`), `dropped` for the same
 * reason under `platform-wins` (docs/cutover.md "Changes made on the platform").
 */
export const UPDATE_STATUSES = ['planned', 'sent', 'done', 'rejected', 'reported', 'ignored', 'superseded', 'conflict', 'dropped'] as const
export type UpdateStatus = (typeof UPDATE_STATUSES)[number]

/**
 * What a delta does with a change to an item that was changed on the platform after chatferry last
 * wrote it (`changes.conflicts`): `report` holds it back (`conflict`), `source-wins` applies it,
 * `platform-wins` drops it (`dropped`).
 */
export const CONFLICT_POLICIES = ['report', 'source-wins', 'platform-wins'] as const
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number]

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>
type Json = ColumnType<unknown, string | undefined, string>

export interface JobsTable {
  id: string
  app_id: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface RunsTable {
  id: Generated<number>
  job_id: string
  mode: RunMode
  status: ColumnType<RunStatus, RunStatus | undefined, RunStatus>
  owner: string | null
  started_at: Timestamp
  heartbeat_at: Timestamp
  finished_at: Date | null
  stats: Json
  error: string | null
}

export interface CursorsTable {
  job_id: string
  entity: string
  cursor: Json | null
  watermark: Json | null
  updated_at: Timestamp
}

export interface ItemsTable {
  id: Generated<number>
  job_id: string
  entity: string
  legacy_id: string
  target_key: string
  /** The import item as JSON text, sent as is. */
  payload: string | null
  payload_hash: string | null
  /** The hash of the payload the platform accepted; differs from `payload_hash` when the source changed after loading. */
  loaded_hash: string | null
  status: ItemStatus
  done_reason: DoneReason | null
  attempts: ColumnType<number, number | undefined, number>
  last_error_code: string | null
  last_error_message: string | null
  batch_id: number | null
  sort_key: ColumnType<number, number | undefined, number>
  /** The platform's own id of a loaded item when it is not the target key (messages: the numeric id of the import answer). */
  platform_id: ColumnType<string | null, string | null | undefined, string | null>
  /** When the item's legacy row vanished and its removal was planned on the platform (null: present, or only reported). */
  vanished_at: ColumnType<Date | null, Date | string | null | undefined, Date | string | null>
  created_at: Timestamp
  updated_at: Timestamp
}

/** One update intent of an item already on the platform (`chatferry.updates`). */
export interface UpdatesTable {
  id: Generated<number>
  job_id: string
  entity: string
  kind: UpdateKind
  legacy_id: string
  /** The item's target key (uid, guid, `<guid>_member_<uid>`, muid). */
  target_key: string
  /** The call's body as JSON text (the desired state; `{}` for calls without one). */
  body: string
  /** The item payload hash this update brings the platform to (`items.loaded_hash` once every update of the item is done). */
  payload_hash: string | null
  policy: UpdatePolicy
  status: UpdateStatus
  /** Why it was recorded: the fields that changed, `vanished from the source`, or why the platform cannot take it. */
  reason: string | null
  attempts: ColumnType<number, number | undefined, number>
  lease_owner: string | null
  lease_expires_at: Date | null
  http_status: number | null
  error_code: string | null
  error_message: string | null
  created_at: Timestamp
  sent_at: Date | null
  settled_at: Date | null
}

/** A rejected item an operator accepted, with who, when and why (`chatferry.accepted_rejects`). */
export interface AcceptedRejectsTable {
  job_id: string
  entity: string
  target_key: string
  legacy_id: string
  /** The reject's code when it was accepted: the acceptance holds while the item is rejected with it. */
  code: string | null
  message: string | null
  reason: string
  accepted_by: string
  accepted_at: ColumnType<Date, Date | string | undefined, Date | string>
}

/** One item a webhook delivery said was changed on the platform (`chatferry.platform_events`). */
export interface PlatformEventsTable {
  id: Generated<number>
  job_id: string
  /** sha-256 of the delivery's trigger, webhook and data: a redelivery has the same one. */
  event_hash: string
  trigger: string
  webhook_id: string
  entity: 'groups' | 'members' | 'messages'
  /** A message's platform id, a guid, `<guid>_member_<uid>`, lowercase. */
  platform_key: string
  /** The platform's time of the change when the envelope carries one. */
  changed_at: Date | null
  /** The item's state after the change (JSON text). */
  state: string
  /** `platform`: changed there by someone; `chatferry`: the echo of chatferry's own write. */
  origin: 'platform' | 'chatferry'
  received_at: Timestamp
}

/** The job's registered webhook receiver (`chatferry.webhook_receivers`). */
export interface WebhookReceiversTable {
  job_id: string
  webhook_id: string
  url: string
  username: string
  /** `sha256:<salt hex>:<hash hex>` of the generated password; the password is never stored. */
  password_hash: string
  created_at: Timestamp
  updated_at: Timestamp
}

export interface BatchesTable {
  id: Generated<number>
  job_id: string
  entity: string
  item_count: number
  status: ColumnType<BatchStatus, BatchStatus | undefined, BatchStatus>
  parent_id: number | null
  queue_job_id: string | null
  lease_token: string | null
  lease_owner: string | null
  lease_expires_at: Date | null
  claims: ColumnType<number, number | undefined, number>
  requests: ColumnType<number, number | undefined, number>
  rate_limited: ColumnType<number, number | undefined, number>
  http_status: number | null
  latency_ms: number | null
  retry_after_ms: number | null
  error_code: string | null
  error_message: string | null
  created_at: Timestamp
  first_sent_at: Date | null
  settled_at: Date | null
}

export interface IdMapTable {
  job_id: string
  kind: string
  legacy_id: string
  platform_id: string
  created_at: Timestamp
}

export interface QuotaBudgetsTable {
  app_id: string
  tat_ms: ColumnType<number, number | undefined, number>
  paused_until_ms: ColumnType<number, number | undefined, number>
  slots_taken: ColumnType<number, number | undefined, number>
  pauses: ColumnType<number, number | undefined, number>
  updated_at: Timestamp
}

export interface WorkersTable {
  id: string
  job_id: string
  host_key: string
  pid: number
  role: string
  started_at: Timestamp
  heartbeat_at: Timestamp
}

export const FLEET_TENANT_STATES = ['pending', 'creating', 'created', 'provisioned', 'failed', 'deleted'] as const
/**
 * Where a tenant's provisioning stands: `pending` (nothing asked yet), `creating` (the create call
 * may have been sent: a rerun looks the app up by name before creating), `created` (app bound, key
 * sealed), `provisioned` (extensions, team and webhooks done), `failed` (see `last_error`),
 * `deleted` (deprovisioned: the app is archived, then removed by the platform).
 */
export type FleetTenantState = (typeof FLEET_TENANT_STATES)[number]

export interface FleetTenantsTable {
  fleet_id: string
  tenant_id: string
  job_id: string
  app_name: string
  region: string
  app_id: string | null
  state: FleetTenantState
  sealed_key: string | null
  key_id: string | null
  steps: ColumnType<unknown, string | undefined, string>
  last_error: string | null
  scheduled_delete_at: Date | null
  created_at: Timestamp
  updated_at: ColumnType<Date, Date | undefined, Date>
}

export const FILE_STATES = ['planned', 'copied', 'failed', 'skipped'] as const
/** Where a file of the files lane stands (`chatferry.files`). */
export type FileState = (typeof FILE_STATES)[number]

/** One distinct file of a job (`chatferry.files`, issue 27). */
export interface FilesTable {
  id: Generated<number>
  job_id: string
  file_key: string
  locator: unknown
  legacy_url: string
  name: string
  expected_size: string | number | null
  expected_type: string | null
  bytes: string | number | null
  sha256: string | null
  sniffed_type: string | null
  store_key: string | null
  public_url: string | null
  state: ColumnType<FileState, FileState | undefined, FileState>
  on_failure: string | null
  attempts: ColumnType<number, number | undefined, number>
  last_error_cause: string | null
  last_error_reason: string | null
  lease_owner: string | null
  lease_until: Date | null
  fence: ColumnType<string | number, number | undefined, number>
  created_at: Timestamp
  updated_at: Timestamp
  copied_at: Date | null
}

/** A message item's files, in the order of its attachments (`chatferry.file_links`). */
export interface FileLinksTable {
  job_id: string
  target_key: string
  ord: number
  file_id: number
}

/** The ledger database as kysely sees it (tables qualified with their schema). */
export interface StateDatabase {
  'chatferry.jobs': JobsTable
  'chatferry.runs': RunsTable
  'chatferry.cursors': CursorsTable
  'chatferry.items': ItemsTable
  'chatferry.batches': BatchesTable
  'chatferry.id_map': IdMapTable
  'chatferry.quota_budgets': QuotaBudgetsTable
  'chatferry.workers': WorkersTable
  'chatferry.updates': UpdatesTable
  'chatferry.fleet_tenants': FleetTenantsTable
  'chatferry.platform_events': PlatformEventsTable
  'chatferry.webhook_receivers': WebhookReceiversTable
  'chatferry.accepted_rejects': AcceptedRejectsTable
  'chatferry.files': FilesTable
  'chatferry.file_links': FileLinksTable
}
