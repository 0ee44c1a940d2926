/**
 * Reports of `chatferry plan` and `chatferry verify`, one row per run, the whole report as jsonb:
 * each plan is diffed against the previous plan of the same job. Frozen in time: imports nothing
 * from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .withSchema('chatferry')
    .schema.createTable('reports')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    // No foreign key: a dry run must not need (or create) the job's row.
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('plan', 'verify')`))
    .addColumn('run_id', 'text', (c) => c.notNull().unique())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('report', 'jsonb', (c) => c.notNull())
    .execute()
  await sql`create index reports_job_idx on chatferry.reports (job_id, kind, id desc)`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.withSchema('chatferry').schema.dropTable('reports').execute()
}
