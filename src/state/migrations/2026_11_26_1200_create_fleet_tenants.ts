/**
 * Tenant fleets (issue 16): `chatferry.fleet_tenants` binds each tenant of a fleet to the app
 * provisioned for it, with the app's fullAccess key sealed (AES-256-GCM, never in clear), where
 * provisioning stands and its last error. Frozen in time: imports nothing from application code.
 */
import { type Kysely, sql } from 'kysely'

export async function up(db: Kysely<any>): Promise<void> {
  await db
    .withSchema('chatferry')
    .schema.createTable('fleet_tenants')
    .addColumn('fleet_id', 'text', (c) => c.notNull())
    .addColumn('tenant_id', 'text', (c) => c.notNull())
    // The tenant's ledger job (its items, batches, runs); unique across fleets.
    .addColumn('job_id', 'text', (c) => c.notNull().unique())
    .addColumn('app_name', 'text', (c) => c.notNull())
    .addColumn('region', 'text', (c) => c.notNull())
    .addColumn('app_id', 'text')
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'creating', 'created', 'provisioned', 'failed', 'deleted')`))
    // `v1:<iv>:<tag>:<ciphertext>`, opened only with CHATFERRY_FLEET_KEY; key_id names that key.
    .addColumn('sealed_key', 'text')
    .addColumn('key_id', 'text')
    // What provisioning has done to the app: {extensions: [...], team: {...}, webhooks: [...]}.
    .addColumn('steps', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('last_error', 'text')
    .addColumn('scheduled_delete_at', 'timestamptz')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('fleet_tenants_pkey', ['fleet_id', 'tenant_id'])
    .execute()
  // One app serves one tenant; a deleted binding keeps its app id for the record.
  await sql`create unique index fleet_tenants_app_idx on chatferry.fleet_tenants (app_id) where app_id is not null`.execute(db)
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.withSchema('chatferry').schema.dropTable('fleet_tenants').execute()
}
