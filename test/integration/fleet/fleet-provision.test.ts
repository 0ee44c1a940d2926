/**
 * `chatferry fleet provision` / `fleet deprovision` as processes, against the sandbox over HTTP
 * and a real Postgres ledger:
 * - three tenants (a full source block, a generic-sql template, a Mattermost template) get their
 *   apps, extensions, team members and webhooks: checked in the sandbox's state and request log;
 *   a second run sends nothing new;
 * - a SIGKILL while the create call's answer is on its way: the rerun finds the app by name, and
 *   the sandbox's request log holds exactly one creation;
 * - the stored keys are sealed (not in the ledger's text, not openable with another key or for
 *   another tenant) and appear in no output;
 * - bad fleet files are refused before any request with every problem listed; a missing or
 *   malformed fleet key refuses to start before the ledger is touched; wrong management
 *   credentials stop at the first call; an app of the same name this ledger never created is not
 *   taken over; deprovision deletes and says what that means.
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { keyVault, VaultError } from '../../../src/fleet/key-vault.ts'
import type { Sandbox } from '../../../src/sandbox/index.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { startHoldingProxy } from '../../helpers/holding-proxy.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { MGMT, startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
let sandbox: Sandbox
let dir: string
const dbs: TestDatabase[] = []
/** Everything the CLI printed in this file: no key may be in it. */
const printed: string[] = []

const fleetKey = randomBytes(32)
const FLEET_KEY = fleetKey.toString('base64')
const ENV = { CF_MGMT_KEY: MGMT.key, CF_MGMT_SECRET: MGMT.secret, CHATFERRY_FLEET_KEY: FLEET_KEY }

beforeAll(async () => {
  t = await startTestSandbox({ maxApps: 50 })
  sandbox = t.sandbox
  dir = mkdtempSync(join(tmpdir(), 'chatferry-fleet-'))
})
afterAll(async () => {
  await t?.close()
  for (const d of dbs) {
    await d.drop()
  }
})

async function freshLedger(): Promise<TestDatabase> {
  const d = await createTestDatabase('cf_fleet_prov')
  dbs.push(d)
  return d
}

let fileNo = 0
function writeFleet(doc: unknown): string {
  const file = join(dir, `fleet-${++fileNo}.yaml`)
  writeFileSync(file, typeof doc === 'string' ? doc : stringify(doc))
  return file
}

function fleetDoc(stateUrl: string, fleetId: string, mgmtUrl = sandbox.url, tenants?: unknown[]): Record<string, unknown> {
  return {
    fleet: { id: fleetId },
    state: { url: stateUrl },
    management: { url: mgmtUrl, key: '${CF_MGMT_KEY}', secret: '${CF_MGMT_SECRET}' },
    defaults: {
      region: 'eu',
      target: { baseUrl: `${sandbox.url}/apps/{appId}/v3`, quota: { requestsPerMinute: 600 } },
      app: { extensions: ['polls', 'reactions'], team: { admins: ['ops@example.com'] } },
    },
    sources: {
      shared: {
        connector: 'generic-sql',
        url: `sqlite:${join(dir, 'legacy.db')}`,
        tenantColumn: 'org_id',
        entities: { users: { query: 'SELECT id, name, org_id FROM users' } },
      },
      mm: { connector: 'mattermost', url: 'postgres://mm@127.0.0.1:5432/mattermost' },
    },
    tenants: tenants ?? [
      {
        id: 'acme',
        name: `Acme ${fleetId}`,
        region: 'us',
        source: { connector: 'generic-sql', url: `sqlite:${join(dir, 'acme.db')}`, entities: { users: { query: 'SELECT id, name FROM users' } } },
        app: {
          team: { admins: ['ann@acme.example'], moderators: ['mo@acme.example'] },
          webhooks: [{ id: 'acmehook', name: 'Acme hook', webhookURL: 'https://hooks.acme.example/cc', triggers: ['message_sent', 'group_created'] }],
        },
      },
      { id: 'globex', name: `Globex ${fleetId}`, source: { template: 'shared', tenantValue: 42 }, app: { extensions: ['mentions'] } },
      { id: 'initech', name: `Initech ${fleetId}`, region: 'in', source: { template: 'mm', team: 'initech' } },
    ],
  }
}

async function provision(file: string, env: Record<string, string> = ENV, extra: string[] = []) {
  const r = await runCli(['fleet', 'provision', '--fleet', file, ...extra], env).done
  printed.push(r.stdout, r.stderr)
  return r
}

async function query<T = Record<string, unknown>>(url: string, text: string, params: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return (await c.query(text, params)).rows as T[]
  } finally {
    await c.end()
  }
}

interface BindingRow {
  tenant_id: string
  app_id: string | null
  state: string
  sealed_key: string | null
  key_id: string | null
  region: string
  job_id: string
}
const bindingsOf = (url: string, fleetId: string) =>
  query<BindingRow>(url, 'select * from chatferry.fleet_tenants where fleet_id = $1 order by tenant_id', [fleetId])

async function appsNamed(name: string) {
  return sandbox.store.selectFrom('apps').selectAll().where('name', '=', name).execute()
}
async function fullKeyOf(appId: string): Promise<string> {
  const k = await sandbox.store
    .selectFrom('api_keys')
    .select('api_key')
    .where('app_id', '=', appId)
    .where('scope', '=', 'fullAccess')
    .executeTakeFirstOrThrow()
  return k.api_key
}
async function requestLog(appId: string) {
  await sandbox.whenIdle()
  return (await sandbox.requests(appId)).map((r) => `${r.method} ${r.endpoint} ${r.status}`)
}

describe('fleet provision: three tenants', () => {
  let ledger: TestDatabase
  let file: string
  const allKeys: string[] = []

  beforeAll(async () => {
    ledger = await freshLedger()
    file = writeFleet(fleetDoc(ledger.url, 'three'))
  })

  it('creates each app with its region, enables its extensions, adds its team and configures its webhooks', async () => {
    const r = await provision(file)
    expect(r.code, r.stderr).toBe(0)
    const bindings = await bindingsOf(ledger.url, 'three')
    expect(bindings.map((b) => [b.tenant_id, b.state, b.region, b.job_id])).toEqual([
      ['acme', 'provisioned', 'us', 'three_acme'],
      ['globex', 'provisioned', 'eu', 'three_globex'],
      ['initech', 'provisioned', 'in', 'three_initech'],
    ])
    for (const [tenant, name, region] of [
      ['acme', 'Acme three', 'us'],
      ['globex', 'Globex three', 'eu'],
      ['initech', 'Initech three', 'in'],
    ] as const) {
      const apps = await appsNamed(name)
      expect(apps.map((a) => [a.state, a.region])).toEqual([['active', region]])
      const app = apps[0] as { id: string }
      expect(bindings.find((b) => b.tenant_id === tenant)?.app_id).toBe(app.id)
      allKeys.push(await fullKeyOf(app.id))
      expect(r.stdout).toContain(`${tenant}  app ${app.id} (${region})  provisioned (app created`)
    }
    const byTenant = Object.fromEntries(bindings.map((b) => [b.tenant_id, b.app_id as string]))
    const enabled = async (appId: string) =>
      (await sandbox.store.selectFrom('app_extensions').select('extension_id').where('app_id', '=', appId).where('enabled', '=', true).execute())
        .map((e) => e.extension_id)
        .sort()
    expect(await enabled(byTenant.acme as string)).toEqual(['polls', 'reactions'])
    expect(await enabled(byTenant.globex as string)).toEqual(['mentions'])
    expect(await enabled(byTenant.initech as string)).toEqual(['polls', 'reactions'])
    const team = async (appId: string) =>
      (await sandbox.store.selectFrom('app_collaborators').select(['email', 'role']).where('app_id', '=', appId).orderBy('email').execute()).map(
        (c) => `${c.role}:${c.email}`,
      )
    expect(await team(byTenant.acme as string)).toEqual(['admin:ann@acme.example', 'moderator:mo@acme.example'])
    expect(await team(byTenant.globex as string)).toEqual(['admin:ops@example.com'])
    const hooks = await sandbox.store
      .selectFrom('webhooks')
      .selectAll()
      .where('app_id', '=', byTenant.acme as string)
      .execute()
    expect(hooks.map((h) => [h.id, h.webhook_url, h.version, h.enabled])).toEqual([['acmehook', 'https://hooks.acme.example/cc', '2', true]])
    const triggers = await sandbox.store
      .selectFrom('webhook_triggers')
      .select('trigger_id')
      .where('app_id', '=', byTenant.acme as string)
      .orderBy('trigger_id')
      .execute()
    expect(triggers.map((x) => x.trigger_id)).toEqual(['group_created', 'message_sent'])
    expect(
      await sandbox.store
        .selectFrom('webhooks')
        .selectAll()
        .where('app_id', '=', byTenant.globex as string)
        .execute(),
    ).toEqual([])
    // What reached the sandbox, per app, in order.
    expect(await requestLog(byTenant.acme as string)).toEqual([
      'POST apps 200',
      'POST extensions 200',
      'POST collaborators 200',
      'GET webhooks 200',
      'POST webhooks 200',
      'GET webhook-triggers 200',
      'POST webhook-triggers 200',
    ])
    expect(await requestLog(byTenant.globex as string)).toEqual(['POST apps 200', 'POST extensions 200', 'POST collaborators 200'])
  })

  it('a second run sends nothing new: no app, extension, team or webhook call', async () => {
    const before = await Promise.all((await bindingsOf(ledger.url, 'three')).map(async (b) => (await requestLog(b.app_id as string)).length))
    const r = await provision(file, ENV, ['--json'])
    expect(r.code, r.stderr).toBe(0)
    const out = JSON.parse(r.stdout) as { tenants: { tenantId: string; app: string; state: string; setup: Record<string, number> }[] }
    expect(out.tenants.map((x) => [x.tenantId, x.app, x.state, x.setup])).toEqual([
      ['acme', 'kept', 'provisioned', { extensions: 0, team: 0, webhooks: 0 }],
      ['globex', 'kept', 'provisioned', { extensions: 0, team: 0, webhooks: 0 }],
      ['initech', 'kept', 'provisioned', { extensions: 0, team: 0, webhooks: 0 }],
    ])
    const after = await Promise.all((await bindingsOf(ledger.url, 'three')).map(async (b) => (await requestLog(b.app_id as string)).length))
    expect(after).toEqual(before)
    expect((await appsNamed('Acme three')).length).toBe(1)
  })

  it('the stored keys are sealed: not in the ledger, not openable with another fleet key or for another tenant', async () => {
    const bindings = await bindingsOf(ledger.url, 'three')
    const dump = JSON.stringify(await query(ledger.url, 'select * from chatferry.fleet_tenants'))
    for (const key of allKeys) {
      expect(dump).not.toContain(key)
    }
    const vault = keyVault(fleetKey)
    for (const b of bindings) {
      expect(b.key_id).toBe(vault.keyId)
      const ctx = { fleetId: 'three', tenantId: b.tenant_id, appId: b.app_id as string }
      expect(allKeys).toContain(vault.open(b.sealed_key as string, ctx))
      expect(() => keyVault(randomBytes(32)).open(b.sealed_key as string, ctx)).toThrow(VaultError)
      expect(() => vault.open(b.sealed_key as string, { ...ctx, tenantId: 'someone-else' })).toThrow(VaultError)
    }
  })

  it('another fleet key is refused before anything is sent (the stored keys were sealed with the first)', async () => {
    const r = await provision(file, { ...ENV, CHATFERRY_FLEET_KEY: randomBytes(32).toString('hex') })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('CHATFERRY_FLEET_KEY: is not the key that sealed the stored app keys of fleet three')
  })

  it('deprovision needs --yes, deletes the app, says what deletion means, and the tenant is left alone afterwards', async () => {
    const noYes = await runCli(['fleet', 'deprovision', '--fleet', file, '--tenant', 'globex'], ENV).done
    printed.push(noYes.stdout, noYes.stderr)
    expect(noYes.code).toBe(2)
    expect(noYes.stderr).toContain('--yes')
    const appId = (await bindingsOf(ledger.url, 'three')).find((b) => b.tenant_id === 'globex')?.app_id as string
    const r = await runCli(['fleet', 'deprovision', '--fleet', file, '--tenant', 'globex', '--yes'], ENV).done
    printed.push(r.stdout, r.stderr)
    expect(r.code, r.stderr).toBe(0)
    expect(r.stdout).toContain(`tenant globex: app ${appId} deleted`)
    expect(r.stdout).toContain('ERR_APP_ARCHIVED')
    expect(r.stdout).toMatch(/permanently deleted on \d{4}-\d\d-\d\dT/)
    expect((await appsNamed('Globex three')).map((a) => a.state)).toEqual(['deleted'])
    const b = (await bindingsOf(ledger.url, 'three')).find((x) => x.tenant_id === 'globex')
    expect([b?.state, b?.sealed_key, b?.app_id]).toEqual(['deleted', null, appId])
    const again = await provision(file)
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain('globex')
    expect(again.stdout).toContain('deprovisioned')
    expect((await appsNamed('Globex three')).length).toBe(1)
  })

  it('no key appears in anything the CLI printed', () => {
    const all = printed.join('\n')
    expect(all.length).toBeGreaterThan(0)
    for (const key of [...allKeys, FLEET_KEY, MGMT.key, MGMT.secret]) {
      expect(all).not.toContain(key)
    }
  })
})

describe('fleet provision: a crash while the app is being created', () => {
  it('SIGKILL after the create call reached the platform: the rerun finds the app by name; one creation in the request log', async () => {
    const ledger = await freshLedger()
    const proxy = await startHoldingProxy(sandbox.url, 60_000)
    try {
      proxy.hold = (method, path) => method === 'POST' && path === '/apps'
      const file = writeFleet(
        fleetDoc(ledger.url, 'crash', proxy.origin, [{ id: 'solo', name: 'Solo crash', source: { template: 'shared', tenantValue: 'solo' } }]),
      )
      const run = runCli(['fleet', 'provision', '--fleet', file], ENV)
      await proxy.held(1)
      run.child.kill('SIGKILL')
      const killed = await run.done
      printed.push(killed.stdout, killed.stderr)
      expect(killed.signal).toBe('SIGKILL')
      const apps = await appsNamed('Solo crash')
      expect(apps.length).toBe(1)
      const before = await bindingsOf(ledger.url, 'crash')
      expect(before.map((b) => [b.state, b.app_id])).toEqual([['creating', null]])

      proxy.hold = undefined
      const r = await provision(file)
      expect(r.code, r.stderr).toBe(0)
      expect(r.stdout).toContain('app found again')
      const appId = (apps[0] as { id: string }).id
      expect((await appsNamed('Solo crash')).map((a) => a.id)).toEqual([appId])
      expect((await requestLog(appId)).filter((l) => l.startsWith('POST apps'))).toEqual(['POST apps 200'])
      const after = await bindingsOf(ledger.url, 'crash')
      expect(after.map((b) => [b.state, b.app_id])).toEqual([['provisioned', appId]])
      expect(keyVault(fleetKey).open(after[0]?.sealed_key as string, { fleetId: 'crash', tenantId: 'solo', appId })).toBe(await fullKeyOf(appId))
    } finally {
      await proxy.close()
    }
  })

  it('an app of the same name that this ledger never asked for is not taken over (exit 2, tenant failed with the reason)', async () => {
    const ledger = await freshLedger()
    const foreign = await t.mgmt.createApp({ name: 'Taken name', region: 'eu', version: '3' })
    const file = writeFleet(
      fleetDoc(ledger.url, 'taken', sandbox.url, [{ id: 'late', name: 'Taken name', source: { template: 'shared', tenantValue: 7 } }]),
    )
    const r = await provision(file)
    expect(r.code).toBe(2)
    expect(r.stdout).toContain(`an app named "Taken name" already exists (${foreign.appId}) and this ledger never asked for it`)
    expect((await appsNamed('Taken name')).length).toBe(1)
    const [b] = await bindingsOf(ledger.url, 'taken')
    expect([b?.state, b?.app_id]).toEqual(['failed', null])
  })
})

describe('fleet provision: refused before it starts', () => {
  it('a bad fleet file: every problem listed with its tenant and path, no request sent, the ledger untouched', async () => {
    const ledger = await freshLedger()
    const doc = fleetDoc(ledger.url, 'bad')
    doc.tenants = [
      { id: 'dup', name: 'Dup one', source: { template: 'shared', tenantValue: 1 } },
      { id: 'dup', name: 'Dup two', source: { template: 'shared', tenantValue: 2 } },
      { id: 'mars', name: 'Mars', region: 'mars', source: { template: 'shared', tenantValue: 3 } },
      { id: 'nosource', name: 'No source' },
      { id: 'ext', name: 'Ext', source: { template: 'shared', tenantValue: 4 }, app: { extensions: ['polls', 'pollz'] } },
      { id: 'tpl', name: 'Tpl', source: { template: 'nope', tenantValue: 5 } },
    ]
    const appsBefore = (await sandbox.store.selectFrom('apps').select('id').execute()).length
    const r = await provision(writeFleet(doc))
    expect(r.code).toBe(2)
    for (const line of [
      'tenants[1].id: duplicate tenant id dup (also tenants[0])',
      'tenants[2].region: tenant mars: unknown region "mars"',
      'tenants[3].source: tenant nosource: is required',
      'tenants[4].app.extensions[1]: tenant ext: unknown extension "pollz"',
      'tenants[5].source.template: tenant tpl: no shared source "nope"',
    ]) {
      expect(r.stderr).toContain(line)
    }
    expect(r.stderr).toContain('5 problems')
    expect((await sandbox.store.selectFrom('apps').select('id').execute()).length).toBe(appsBefore)
    expect(await query(ledger.url, "select 1 from information_schema.schemata where schema_name = 'chatferry'")).toEqual([])
  })

  it('no fleet key, or a malformed one: refuses to start, before the fleet file or the ledger is read', async () => {
    const ledger = await freshLedger()
    const file = writeFleet(fleetDoc(ledger.url, 'nokey'))
    const { CHATFERRY_FLEET_KEY: _, ...withoutKey } = ENV
    const missing = await provision(file, { ...withoutKey, CHATFERRY_FLEET_KEY: '' })
    expect(missing.code).toBe(2)
    expect(missing.stderr).toContain('CHATFERRY_FLEET_KEY: is not set')
    const short = await provision(file, { ...ENV, CHATFERRY_FLEET_KEY: 'too-short' })
    expect(short.code).toBe(2)
    expect(short.stderr).toContain('CHATFERRY_FLEET_KEY: must be 32 random bytes')
    expect(short.stderr).not.toContain('too-short')
    expect(await query(ledger.url, "select 1 from information_schema.schemata where schema_name = 'chatferry'")).toEqual([])
  })

  it('wrong management credentials stop at the first call with a clear message; nothing created, no binding', async () => {
    const ledger = await freshLedger()
    const file = writeFleet(fleetDoc(ledger.url, 'badcreds'))
    const appsBefore = (await sandbox.store.selectFrom('apps').select('id').execute()).length
    const r = await provision(file, { ...ENV, CF_MGMT_SECRET: 'cf-test-secret-wrongsecret' })
    expect(r.code).toBe(2)
    expect(r.stderr).toContain('management: the management interface at')
    expect(r.stderr).toContain('refused the key and secret (AUTH_ERR_APIKEY_NOT_FOUND, HTTP 401)')
    expect(r.stderr).not.toContain('cf-test-secret-wrongsecret')
    expect((await sandbox.store.selectFrom('apps').select('id').execute()).length).toBe(appsBefore)
    expect(await bindingsOf(ledger.url, 'badcreds')).toEqual([])
  })
})
