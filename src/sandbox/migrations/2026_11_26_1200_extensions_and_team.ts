/**
 * The management interface's extension and team endpoints (issue 16): which extensions each app
 * has enabled, and each app's team members (dashboard collaborators) by email with their role.
 * Frozen in time: imports nothing from the application.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await sql`create table sandbox.app_extensions (
    app_id text not null,
    extension_id text not null,
    enabled boolean not null,
    updated_at bigint not null,
    constraint app_extensions_pk primary key (app_id, extension_id)
  )`.execute(db)
  await sql`create table sandbox.app_collaborators (
    app_id text not null,
    email text not null,
    seq bigint generated always as identity,
    role text not null,
    created_at bigint not null,
    constraint app_collaborators_pk primary key (app_id, email)
  )`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop table sandbox.app_collaborators`.execute(db)
  await sql`drop table sandbox.app_extensions`.execute(db)
}
