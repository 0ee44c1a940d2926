/**
 * Accepted rejects (issue 28): `chatferry.accepted_rejects` holds the rejected items an operator
 * has judged and accepted — who, when and why — so that known-bad legacy rows stop making every
 * run exit 3. An acceptance is of one item's reject with the code it had then: the same item
 * rejected again for another code is a new reject. Frozen in time: imports nothing from
 * application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .withSchema('chatferry')
    .schema.createTable('accepted_rejects')
    .addColumn('job_id', 'text', (c) => c.notNull().references('chatferry.jobs.id').onDelete('cascade'))
    .addColumn('entity', 'text', (c) => c.notNull().check(sql`entity in ('users', 'groups', 'members', 'messages')`))
    // The item's key in chatferry.items (`~legacy:<id>…` for a row that never got one of the platform's).
    .addColumn('target_key', 'text', (c) => c.notNull())
    .addColumn('legacy_id', 'text', (c) => c.notNull())
    // The reject's code and message when it was accepted (the acceptance lapses if the code changes).
    .addColumn('code', 'text')
    .addColumn('message', 'text')
    // Why the operator accepts it, who did, when.
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('accepted_by', 'text', (c) => c.notNull())
    .addColumn('accepted_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('accepted_rejects_pk', ['job_id', 'entity', 'target_key'])
    .execute()
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.withSchema('chatferry').schema.dropTable('accepted_rejects').execute()
}
