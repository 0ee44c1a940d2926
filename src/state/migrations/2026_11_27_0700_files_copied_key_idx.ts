/**
 * The files lane's dedupe from the ledger (issue 27's benchmark): before uploading, a copy asks
 * whether a file of the job is already `copied` under the same content-addressed store key
 * (src/state/sql/select-copied-store-key.ts). This index answers that per file without scanning
 * the job's files. Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create index files_copied_key_idx on chatferry.files (job_id, store_key) where state = 'copied'`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index chatferry.files_copied_key_idx`.execute(db)
}
