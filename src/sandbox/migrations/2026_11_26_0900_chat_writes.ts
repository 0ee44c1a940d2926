/**
 * What the chat interface's writes (issue 13) change besides what the import stores: a user's
 * `statusMessage`, a group's `description` (the import has none; `PUT /groups/{guid}` sets it),
 * and a message's edit and soft delete (`editedAt`/`editedBy`, `deletedAt`/`deletedBy`, shown by
 * the chat reads). Frozen in time: imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.users add column status_message text`.execute(db)
  await sql`alter table sandbox.groups add column description text`.execute(db)
  await sql`alter table sandbox.messages add column edited_at bigint, add column edited_by text, add column deleted_at bigint, add column deleted_by text`.execute(
    db,
  )
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.messages drop column edited_at, drop column edited_by, drop column deleted_at, drop column deleted_by`.execute(db)
  await sql`alter table sandbox.groups drop column description`.execute(db)
  await sql`alter table sandbox.users drop column status_message`.execute(db)
}
