/**
 * The ledger: jobs, runs, cursors, items, batches, the id map, the shared quota budget and the
 * registry of live loader processes. Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create schema if not exists chatferry`.execute(db)
  const s = db.withSchema('chatferry').schema

  await s
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('app_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await s
    .createTable('runs')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('mode', 'text', (c) => c.notNull().check(sql`mode in ('plan', 'run', 'delta', 'load', 'worker')`))
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('running')
        .check(sql`status in ('running', 'succeeded', 'rejected', 'failed', 'stopped')`),
    )
    .addColumn('owner', 'text')
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('heartbeat_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('finished_at', 'timestamptz')
    .addColumn('stats', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('error', 'text')
    .execute()
  await s.createIndex('runs_job_idx').on('runs').columns(['job_id', 'started_at']).execute()

  await s
    .createTable('cursors')
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('cursor', 'jsonb')
    .addColumn('watermark', 'jsonb')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('cursors_pk', ['job_id', 'entity'])
    .execute()

  await s
    .createTable('items')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('entity', 'text', (c) => c.notNull().check(sql`entity in ('users', 'groups', 'members', 'messages')`))
    .addColumn('legacy_id', 'text', (c) => c.notNull())
    .addColumn('target_key', 'text', (c) => c.notNull())
    .addColumn('payload', 'text')
    .addColumn('payload_hash', 'text')
    .addColumn('loaded_hash', 'text')
    .addColumn('status', 'text', (c) => c.notNull().check(sql`status in ('planned', 'sent', 'done', 'skipped', 'rejected')`))
    .addColumn('done_reason', 'text', (c) => c.check(sql`done_reason in ('created', 'already_present')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error_code', 'text')
    .addColumn('last_error_message', 'text')
    .addColumn('batch_id', 'bigint')
    .addColumn('sort_key', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('items_key_uq', ['job_id', 'entity', 'target_key'])
    .execute()
  // Draining: the packer reads planned items of one entity in sort order.
  await sql`create index items_planned_idx on chatferry.items (job_id, entity, sort_key, id) where status = 'planned'`.execute(db)
  // "Is anything of this entity still open?" and the resume/settle paths.
  await sql`create index items_open_idx on chatferry.items (job_id, entity) where status in ('planned', 'sent')`.execute(db)
  await sql`create index items_batch_idx on chatferry.items (batch_id) where batch_id is not null`.execute(db)
  await sql`create index items_rejected_idx on chatferry.items (job_id, last_error_code) where status = 'rejected'`.execute(db)

  await s
    .createTable('batches')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('entity', 'text', (c) => c.notNull())
    .addColumn('item_count', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) =>
      c
        .notNull()
        .defaultTo('open')
        .check(sql`status in ('open', 'settled', 'split', 'abandoned')`),
    )
    .addColumn('parent_id', 'bigint')
    .addColumn('queue_job_id', 'uuid')
    .addColumn('lease_token', 'uuid')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'timestamptz')
    .addColumn('claims', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('requests', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('rate_limited', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('http_status', 'integer')
    .addColumn('latency_ms', 'integer')
    .addColumn('retry_after_ms', 'integer')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('first_sent_at', 'timestamptz')
    .addColumn('settled_at', 'timestamptz')
    .execute()
  await sql`create index batches_open_idx on chatferry.batches (job_id, entity) where status = 'open'`.execute(db)
  await sql`create index batches_settled_idx on chatferry.batches (job_id, settled_at)`.execute(db)

  await s
    .createTable('id_map')
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('legacy_id', 'text', (c) => c.notNull())
    .addColumn('platform_id', 'text', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('id_map_pk', ['job_id', 'kind', 'legacy_id'])
    .addUniqueConstraint('id_map_platform_uq', ['job_id', 'kind', 'platform_id'])
    .execute()

  await s
    .createTable('quota_budgets')
    .addColumn('app_id', 'text', (c) => c.primaryKey())
    // GCRA: the theoretical arrival time of the next request slot, epoch milliseconds.
    .addColumn('tat_ms', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('paused_until_ms', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('slots_taken', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('pauses', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()

  await s
    .createTable('workers')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('host_key', 'text', (c) => c.notNull())
    .addColumn('pid', 'integer', (c) => c.notNull())
    .addColumn('role', 'text', (c) => c.notNull())
    .addColumn('started_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('heartbeat_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop schema if exists chatferry cascade`.execute(db)
}
