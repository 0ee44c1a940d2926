/**
 * Runs stopped by a signal are `interrupted` (they finished the work in hand and a rerun resumes),
 * told apart from `failed`. The status check of `runs` admits it. Frozen in time: imports nothing
 * from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`alter table chatferry.runs drop constraint runs_status_check`.execute(db)
  await sql`alter table chatferry.runs add constraint runs_status_check
    check (status in ('running', 'succeeded', 'rejected', 'failed', 'stopped', 'interrupted'))`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`update chatferry.runs set status = 'stopped' where status = 'interrupted'`.execute(db)
  await sql`alter table chatferry.runs drop constraint runs_status_check`.execute(db)
  await sql`alter table chatferry.runs add constraint runs_status_check
    check (status in ('running', 'succeeded', 'rejected', 'failed', 'stopped'))`.execute(db)
}
