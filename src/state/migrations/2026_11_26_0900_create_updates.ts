/**
 * Changes to items already on the platform (issue 13): `chatferry.updates` holds one row per
 * update intent a delta run recorded (a rename, a scope change, an edit, a deletion, …) with its
 * policy and its fate, and `items.platform_id` the platform's own id of a loaded item when it is
 * not the target key (a message's numeric id). Frozen in time: imports nothing from application
 * code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table chatferry.items add column platform_id text`.execute(db)
  // Set when a done item's legacy row vanished and its removal was planned on the platform
  // (deactivate, kick, delete): a row that comes back is then re-added, not compared field by field.
  await sql`alter table chatferry.items add column vanished_at timestamptz`.execute(db)

  await db
    .withSchema('chatferry')
    .schema.createTable('updates')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('entity', 'text', (c) => c.notNull().check(sql`entity in ('users', 'groups', 'members', 'messages')`))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('legacy_id', 'text', (c) => c.notNull())
    .addColumn('target_key', 'text', (c) => c.notNull())
    // The desired state the call sends (JSON text); `{}` for calls without a body.
    .addColumn('body', 'text', (c) => c.notNull())
    // The item payload hash this update brings the platform to (items.loaded_hash once every update of the item is done).
    .addColumn('payload_hash', 'text')
    .addColumn('policy', 'text', (c) => c.notNull().check(sql`policy in ('apply', 'report', 'ignore')`))
    .addColumn('status', 'text', (c) =>
      c.notNull().check(sql`status in ('planned', 'sent', 'done', 'rejected', 'reported', 'ignored', 'superseded')`),
    )
    // Why it was recorded: the fields that changed, `vanished from the source`, or why the platform cannot take it.
    .addColumn('reason', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('http_status', 'integer')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('sent_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .execute()
  // The lane drains planned rows per entity in id order; status counts per status and entity.
  await sql`create index updates_status_idx on chatferry.updates (job_id, status, entity, id)`.execute(db)
  // One planned intent per item and kind: a newer change of the same kind supersedes the planned one.
  await sql`create unique index updates_planned_uq on chatferry.updates (job_id, entity, target_key, kind) where status = 'planned'`.execute(db)
  // Every update of one item, in order (is the item's last update settled? was this change reported already?).
  await sql`create index updates_item_idx on chatferry.updates (job_id, entity, target_key, id)`.execute(db)
  // The key-set comparison for vanished items reads the job's done items of an entity by legacy id.
  await sql`create index items_done_legacy_idx on chatferry.items (job_id, entity, legacy_id, id) where status = 'done'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index if exists chatferry.items_done_legacy_idx`.execute(db)
  await db.withSchema('chatferry').schema.dropTable('updates').execute()
  await sql`alter table chatferry.items drop column vanished_at`.execute(db)
  await sql`alter table chatferry.items drop column platform_id`.execute(db)
}
