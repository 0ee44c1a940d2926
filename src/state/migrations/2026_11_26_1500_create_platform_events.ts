/**
 * Changes made on the platform (issue 15): `chatferry.platform_events` holds one row per item a
 * webhook delivery said was changed there (a message edited or deleted, a group updated, a member
 * kicked …), stored by `chatferry webhooks receive` once per delivery however often it is
 * redelivered; `chatferry.webhook_receivers` the job's registered webhook and the hash of its Basic
 * auth password (the password itself is never stored). Updates gain the statuses `conflict` (not
 * applied: the item changed on the platform after chatferry last wrote it, `changes.conflicts:
 * report`) and `dropped` (`platform-wins`). Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .withSchema('chatferry')
    .schema.createTable('platform_events')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    // sha-256 of the delivery's app, webhook, trigger and data: a redelivery has the same one.
    .addColumn('event_hash', 'text', (c) => c.notNull())
    .addColumn('trigger', 'text', (c) => c.notNull())
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('entity', 'text', (c) => c.notNull().check(sql`entity in ('groups', 'members', 'messages')`))
    // The item as the platform names it: a message's platform id, a guid, `<guid>_member_<uid>` (lowercase).
    .addColumn('platform_key', 'text', (c) => c.notNull())
    // The platform's time of the change when the envelope carries one (editedAt, deletedAt, updatedAt).
    .addColumn('changed_at', 'timestamptz')
    // The item's state after the change as the envelope gives it (text, name, scope …): no credentials.
    .addColumn('state', 'text', (c) => c.notNull())
    // `platform`: someone changed it there; `chatferry`: the echo of chatferry's own write (an update it sent, or the state it loaded).
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin in ('platform', 'chatferry')`))
    .addColumn('received_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
  // A redelivery is found by its hash among the recent rows (deliveries carry no id).
  await sql`create index platform_events_hash_idx on chatferry.platform_events (job_id, event_hash, received_at)`.execute(db)
  // The conflict check: an item's events, newest first.
  await sql`create index platform_events_item_idx on chatferry.platform_events (job_id, entity, platform_key, received_at)`.execute(db)

  // A delivery names a message by its platform id: the item is found through it.
  await sql`create index items_platform_id_idx on chatferry.items (job_id, entity, platform_id) where platform_id is not null`.execute(db)

  await db
    .withSchema('chatferry')
    .schema.createTable('webhook_receivers')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('webhook_id', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('username', 'text', (c) => c.notNull())
    // `sha256:<salt hex>:<hash hex>` of the generated password (high-entropy: a fast hash suffices).
    .addColumn('password_hash', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await sql`alter table chatferry.updates drop constraint updates_status_check`.execute(db)
  await sql`alter table chatferry.updates add constraint updates_status_check
    check (status in ('planned', 'sent', 'done', 'rejected', 'reported', 'ignored', 'superseded', 'conflict', 'dropped'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`delete from chatferry.updates where status in ('conflict', 'dropped')`.execute(db)
  await sql`alter table chatferry.updates drop constraint updates_status_check`.execute(db)
  await sql`alter table chatferry.updates add constraint updates_status_check
    check (status in ('planned', 'sent', 'done', 'rejected', 'reported', 'ignored', 'superseded'))`.execute(db)
  await db.withSchema('chatferry').schema.dropTable('webhook_receivers').execute()
  await sql`drop index if exists chatferry.items_platform_id_idx`.execute(db)
  await db.withSchema('chatferry').schema.dropTable('platform_events').execute()
}
