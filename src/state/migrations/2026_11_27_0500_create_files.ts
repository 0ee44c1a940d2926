/**
 * The files lane (issue 27): `chatferry.files` holds one row per distinct file of a job (its
 * source locator — never a credential — and what the lane learned copying it: bytes, SHA-256,
 * sniffed type, store key, public URL, state, attempts, last error, and its lease), and
 * `chatferry.file_links` ties each message item to its files in the order of its attachments. A
 * message is packed only when none of its files holds it (src/state/sql/select-planned-items.ts).
 * Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  const s = db.withSchema('chatferry').schema
  await s
    .createTable('files')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    // `<reader>:<ref>`: one row per distinct file of the job, however many messages share it.
    .addColumn('file_key', 'text', (c) => c.notNull())
    // The FileLocator ({reader, ref, host}); never a credential.
    .addColumn('locator', 'jsonb', (c) => c.notNull())
    // The attachment's URL as the legacy record gives it (what `reference` sends, `link-original` keeps).
    .addColumn('legacy_url', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('expected_size', 'bigint')
    .addColumn('expected_type', 'text')
    .addColumn('bytes', 'bigint')
    .addColumn('sha256', 'text')
    .addColumn('sniffed_type', 'text')
    .addColumn('store_key', 'text')
    .addColumn('public_url', 'text')
    .addColumn('state', 'text', (c) =>
      c
        .notNull()
        .defaultTo('planned')
        .check(sql`state in ('planned', 'copied', 'failed', 'skipped')`),
    )
    // What a message of a failed file does (files.onFailure when the lane settled it): `wait` holds it.
    .addColumn('on_failure', 'text', (c) => c.check(sql`on_failure in ('wait', 'link-original', 'note')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error_cause', 'text')
    .addColumn('last_error_reason', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_until', 'timestamptz')
    // Raised by every claim: a holder whose lease was taken over settles nothing (its fence is old).
    .addColumn('fence', 'bigint', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('copied_at', 'timestamptz')
    .addUniqueConstraint('files_key_uq', ['job_id', 'file_key'])
    .execute()
  await sql`create index files_open_idx on chatferry.files (job_id, id) where state = 'planned'`.execute(db)

  await s
    .createTable('file_links')
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    // The message item's target key (entity `messages`).
    .addColumn('target_key', 'text', (c) => c.notNull())
    // The attachment's place in the message (0-based).
    .addColumn('ord', 'integer', (c) => c.notNull())
    .addColumn('file_id', 'bigint', (c) => c.notNull().references('chatferry.files.id').onDelete('cascade'))
    .addPrimaryKeyConstraint('file_links_pk', ['job_id', 'target_key', 'ord'])
    .execute()
  await sql`create index file_links_file_idx on chatferry.file_links (file_id)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.withSchema('chatferry').schema.dropTable('file_links').execute()
  await db.withSchema('chatferry').schema.dropTable('files').execute()
}
