/**
 * A persistent sandbox store written before webhooks followed the published API keeps working
 * after the upgrade: the old `triggers` lists become the triggers sub-resource (null = the 31 ids
 * the sandbox then knew), webhooks become `legacy`, and stored settings lose the retired
 * `webhookMaxAttempts` without losing the rest.
 */
import { Kysely, PostgresDialect, sql } from 'kysely'
import { Migrator } from 'kysely/migration'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { startSandbox } from '../../../src/sandbox/index.ts'
import { SANDBOX_MIGRATIONS } from '../../../src/sandbox/migrations/index.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { MGMT } from '../../helpers/secrets.ts'

let database: TestDatabase
beforeAll(async () => {
  database = await createTestDatabase('sbxmig')
})
afterAll(async () => {
  await database?.drop()
})

describe('migration 2026_11_24_0700_webhooks_as_published', () => {
  it('moves trigger lists into the sub-resource, marks webhooks legacy, strips the retired knob', async () => {
    const db = new Kysely<any>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.url, max: 1 }) }) })
    try {
      const migrator = new Migrator({ db, provider: { getMigrations: async () => SANDBOX_MIGRATIONS }, migrationTableSchema: 'sandbox' })
      const before = await migrator.migrateTo('2026_11_24_0600_request_log_items')
      expect(before.error).toBeUndefined()
      const oldSettings = { requestsPerMinute: 7, webhookTimeoutMs: 5000, webhookMaxAttempts: 3 }
      await sql`insert into sandbox.apps (id, name, region, plan, state, settings, created_at)
        values ('oldapp', 'Old', 'us', 'trial', 'active', ${JSON.stringify(oldSettings)}::jsonb, 1700000000)`.execute(db)
      await sql`insert into sandbox.webhooks (app_id, id, name, webhook_url, use_basic_auth, username, password, enabled, triggers, created_at) values
        ('oldapp', 'listed', 'L', 'https://e.com/a', false, null, null, true, '["message_sent","group_created"]'::jsonb, 1700000001),
        ('oldapp', 'all', 'A', 'https://e.com/b', false, null, null, true, null, 1700000002)`.execute(db)
    } finally {
      await db.destroy()
    }

    const sandbox = await startSandbox({ management: MGMT, state: { url: database.url, poolSize: 2 } })
    try {
      const triggers = await sandbox.store
        .selectFrom('webhook_triggers')
        .select(['webhook_id', 'trigger_id'])
        .where('app_id', '=', 'oldapp')
        .orderBy('seq')
        .execute()
      expect(triggers.filter((r) => r.webhook_id === 'listed').map((r) => r.trigger_id)).toEqual(['message_sent', 'group_created'])
      expect(triggers.filter((r) => r.webhook_id === 'all')).toHaveLength(31)
      const hooks = await sandbox.store
        .selectFrom('webhooks')
        .select(['id', 'version', 'retry_on_failure', 'updated_at'])
        .where('app_id', '=', 'oldapp')
        .orderBy('seq')
        .execute()
      expect(hooks).toEqual([
        { id: 'listed', version: 'legacy', retry_on_failure: false, updated_at: expect.anything() },
        { id: 'all', version: 'legacy', retry_on_failure: false, updated_at: expect.anything() },
      ])
      expect(hooks.map((h) => Number(h.updated_at))).toEqual([1700000001, 1700000002])
      const res = await fetch(`${sandbox.url}/sandbox/apps/oldapp/settings`, { headers: { key: MGMT.key, secret: MGMT.secret } })
      const settings = ((await res.json()) as { data: Record<string, unknown> }).data
      expect(settings).toMatchObject({ requestsPerMinute: 7, webhookTimeoutMs: 2000, webhookRetryDelaysMs: [10_000, 30_000] })
      expect(settings).not.toHaveProperty('webhookMaxAttempts')
      const listed = await fetch(`${sandbox.url}/apps/oldapp/webhooks/listed/triggers`, { headers: { key: MGMT.key, secret: MGMT.secret } })
      expect(((await listed.json()) as { data: { id: string }[] }).data.map((t) => t.id)).toEqual(['message_sent', 'group_created'])
    } finally {
      await sandbox.close()
    }
  })
})
