/**
 * A generic-sql template over one shared legacy database (Postgres and SQLite), read through the
 * real connector from the tenant's job configuration (`tenantJobConfig`): each tenant reads exactly
 * the rows of its tenant value — a text value and an integer one — in every entity, and its job
 * configuration is the one `run` would use (job id, ledger, the bound app).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { createConnector, type SourceConfig } from '../../../connectors/index.ts'
import { parseFleetFile, tenantJobConfig } from '../../../src/fleet/fleet-file.ts'
import { type LegacyEntity, legacyIdOf } from '../../../src/model/records.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'

const STATEMENTS = [
  'CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT NOT NULL, org TEXT NOT NULL, org_no INTEGER NOT NULL)',
  'CREATE TABLE rooms (id TEXT PRIMARY KEY, name TEXT NOT NULL, org TEXT NOT NULL, org_no INTEGER NOT NULL)',
  'CREATE TABLE room_users (room_id TEXT NOT NULL, user_id TEXT NOT NULL, org TEXT NOT NULL, org_no INTEGER NOT NULL, PRIMARY KEY (room_id, user_id))',
  'CREATE TABLE lines (id TEXT PRIMARY KEY, sender TEXT NOT NULL, room_id TEXT NOT NULL, sent_at BIGINT NOT NULL, body TEXT, org TEXT NOT NULL, org_no INTEGER NOT NULL)',
]
const NOW = Date.now()
const ORGS = [
  { org: 'acme-co', no: 1, users: ['a1', 'a2'], room: 'ra' },
  { org: 'globex', no: 2, users: ['g1', 'g2', 'g3'], room: 'rg' },
]
function inserts(): string[] {
  const out: string[] = []
  for (const o of ORGS) {
    for (const u of o.users) {
      out.push(`INSERT INTO users VALUES ('${u}', 'User ${u}', '${o.org}', ${o.no})`)
      out.push(`INSERT INTO room_users VALUES ('${o.room}', '${u}', '${o.org}', ${o.no})`)
      out.push(`INSERT INTO lines VALUES ('m-${u}', '${u}', '${o.room}', ${NOW - 60_000}, 'hello from ${u}', '${o.org}', ${o.no})`)
    }
    out.push(`INSERT INTO rooms VALUES ('${o.room}', 'Room ${o.org}', '${o.org}', ${o.no})`)
  }
  return out
}

function fleetYaml(url: string, column: 'org' | 'org_no'): string {
  const q = (sql: string) => ({ query: sql })
  return stringify({
    fleet: { id: 'tpl' },
    state: { url: 'postgres://postgres@127.0.0.1:5432/unused' },
    defaults: { region: 'us' },
    sources: {
      shared: {
        connector: 'generic-sql',
        url,
        tenantColumn: column,
        entities: {
          users: q(`SELECT id, name, ${column} FROM users`),
          groups: q(`SELECT id, name, ${column} FROM rooms`),
          members: q(`SELECT room_id AS group_id, user_id, ${column} FROM room_users`),
          messages: q(
            `SELECT id, sender AS sender_id, 'group' AS receiver_type, room_id AS receiver_id, sent_at, body AS text, ${column} FROM lines`,
          ),
        },
      },
    },
    tenants: ORGS.map((o) => ({
      id: o.org.replace('-', ''),
      name: o.org,
      source: { template: 'shared', tenantValue: column === 'org' ? o.org : o.no },
    })),
  })
}

async function readAll(source: SourceConfig): Promise<Record<LegacyEntity, string[]>> {
  const session = await createConnector(source).open()
  const out = { users: [], groups: [], members: [], messages: [] } as Record<LegacyEntity, string[]>
  try {
    for (const entity of ['users', 'groups', 'members', 'messages'] as const) {
      for await (const page of session.read(entity)) {
        for (const row of page.rows) {
          expect(row.ok, JSON.stringify(row)).toBe(true)
          if (row.ok) {
            out[entity].push(legacyIdOf(entity, row.record))
          }
        }
      }
      out[entity].sort()
    }
  } finally {
    await session.close()
  }
  return out
}

function expectedOf(o: (typeof ORGS)[number]): Record<LegacyEntity, string[]> {
  return {
    users: [...o.users].sort(),
    groups: [o.room],
    members: o.users.map((u) => `${o.room}/${u}`).sort(),
    messages: o.users.map((u) => `m-${u}`).sort(),
  }
}

let pgDb: TestDatabase
let sqliteUrl: string

beforeAll(async () => {
  pgDb = await createTestDatabase('cf_fleet_tpl')
  const c = new pg.Client({ connectionString: pgDb.url })
  await c.connect()
  for (const s of [...STATEMENTS, ...inserts()]) {
    await c.query(s)
  }
  await c.end()
  const { DatabaseSync } = await import('node:sqlite')
  const file = join(mkdtempSync(join(tmpdir(), 'chatferry-fleet-tpl-')), 'legacy.db')
  const lite = new DatabaseSync(file)
  for (const s of [...STATEMENTS, ...inserts()]) {
    lite.exec(s)
  }
  lite.close()
  sqliteUrl = `sqlite:${file}`
})
afterAll(async () => {
  await pgDb?.drop()
})

describe('generic-sql templates: one shared database, one tenant per value', () => {
  it.each([
    ['postgres', 'org'],
    ['postgres', 'org_no'],
    ['sqlite', 'org'],
    ['sqlite', 'org_no'],
  ] as const)('%s, tenant column %s: each tenant reads exactly its rows', async (engine, column) => {
    const fleet = parseFleetFile(fleetYaml(engine === 'postgres' ? pgDb.url : sqliteUrl, column), 'fleet.yaml', {})
    for (const o of ORGS) {
      const tenantId = o.org.replace('-', '')
      const config = tenantJobConfig(fleet, tenantId, { appId: `app-${tenantId}`, region: 'us', apiKey: 'not-a-real-key-0123456789' })
      expect([config.job?.id, config.target.appId]).toEqual([`tpl_${tenantId}`, `app-${tenantId}`])
      expect(await readAll(config.source as SourceConfig)).toEqual(expectedOf(o))
    }
  })
})
