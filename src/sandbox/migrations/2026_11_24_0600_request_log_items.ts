/**
 * The request log records what each data-import request carried and what the sandbox did with
 * every item: `items` is a JSON array of `{key, result, code?}` (see request-log.ts). Nullable:
 * rows written before it, and requests whose body was not an import, have none. Frozen in time:
 * imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.request_log add column items jsonb`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`alter table sandbox.request_log drop column items`.execute(db)
}
