/**
 * `files.rewriteTextLinks` (issue 27) looks a batch's text links up among a job's files by legacy
 * URL: a hash index (a URL may be longer than a btree entry allows) keeps that one query per
 * batch from reading every file of the job.
 * Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index files_legacy_url_idx on chatferry.files using hash (legacy_url)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index chatferry.files_legacy_url_idx`.execute(db)
}
