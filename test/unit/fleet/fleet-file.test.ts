/**
 * The fleet file (src/fleet/fleet-file.ts, tenant-source.ts) and the key vault (key-vault.ts), as
 * table tests: what a tenant's job configuration becomes (defaults ⊕ tenant, templates made
 * concrete, the bound app), and which problems a file gets, at which path, with secrets masked.
 */
import { randomBytes } from 'node:crypto'

import { describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { ConfigError } from '../../../src/errors.ts'
import { fleetPath, parseFleetFile, tenantJobConfig, tenantJobId } from '../../../src/fleet/fleet-file.ts'
import { FLEET_KEY_ENV, keyVault, openKeyVault, parseFleetKey, VaultError } from '../../../src/fleet/key-vault.ts'

const STATE = 'postgres://postgres@127.0.0.1:5432/ledger'
const APP = { appId: 'app123', region: 'eu' as const, apiKey: 'k-0123456789abcdef' }

function doc(over: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    fleet: { id: 'acme-saas' },
    state: { url: STATE },
    management: { key: 'mk', secret: '${MGMT_SECRET}' },
    defaults: {
      region: 'eu',
      target: { baseUrl: 'http://127.0.0.1:4010/apps/{appId}/v3', quota: { requestsPerMinute: 600 } },
      policies: { retention: { oldMessages: 'send' } },
      app: { extensions: ['polls'] },
    },
    sources: {
      shared: {
        connector: 'generic-sql',
        url: 'sqlite:/tmp/legacy.db',
        tenantColumn: 'org_id',
        entities: { users: { query: 'SELECT id, name, org_id FROM users' }, messages: { query: 'SELECT * FROM posts' } },
      },
      mm: { connector: 'mattermost', url: 'postgres://mm@127.0.0.1/mm', groupName: '{team}-{channel}' },
    },
    tenants: [
      { id: 'one', name: 'One', source: { template: 'shared', tenantValue: 42 }, target: { quota: { requestsPerMinute: 30 } } },
      { id: 'two', name: 'Two', region: 'us', source: { template: 'mm', team: 'two-team' }, app: { extensions: ['mentions', 'polls'] } },
      {
        id: 'three',
        name: 'Three',
        source: { connector: 'generic-sql', url: 'sqlite:/tmp/three.db', entities: {} },
        policies: { retention: { oldMessages: 'skip' } },
      },
    ],
    ...over,
  }
}

const ENV = { MGMT_SECRET: 'the-mgmt-secret' }
const parse = (d: unknown, env: NodeJS.ProcessEnv = ENV) => parseFleetFile(stringify(d), 'fleet.yaml', env)

function problemsOf(d: unknown, env: NodeJS.ProcessEnv = ENV): string[] {
  try {
    parse(d, env)
  } catch (err) {
    if (err instanceof ConfigError) {
      return err.problems.map((p) => `${p.path}: ${p.message}`)
    }
    throw err
  }
  return []
}

describe('tenant job configurations', () => {
  const fleet = parse(doc())

  it('the tenants after defaults: job id, region, app name, version, extensions', () => {
    expect(fleet.tenants.map((t) => [t.id, t.jobId, t.region, t.appName, t.version, t.extensions])).toEqual([
      ['one', 'acme-saas_one', 'eu', 'One', '3', ['polls']],
      ['two', 'acme-saas_two', 'us', 'Two', '3', ['mentions', 'polls']],
      ['three', 'acme-saas_three', 'eu', 'Three', '3', ['polls']],
    ])
    expect(tenantJobId('f', 't')).toBe('f_t')
  })

  it('a generic-sql template keeps the rows of the tenant value; target and quota from defaults ⊕ tenant; the bound app', () => {
    const c = tenantJobConfig(fleet, 'one', APP)
    expect(c.job?.id).toBe('acme-saas_one')
    expect(c.state.url).toBe(STATE)
    expect([c.target.appId, c.target.region, c.target.apiKey, c.target.baseUrl]).toEqual([
      'app123',
      'eu',
      'k-0123456789abcdef',
      'http://127.0.0.1:4010/apps/app123/v3',
    ])
    expect(c.target.quota.requestsPerMinute).toBe(30)
    expect(c.policies.retention.oldMessages).toBe('send')
    const source = c.source as { connector: string; entities: Record<string, { query: string } | undefined> }
    expect(source.connector).toBe('generic-sql')
    expect(source.entities.users?.query).toBe(
      'SELECT * FROM (SELECT id, name, org_id FROM users\n) AS chatferry_tenant WHERE chatferry_tenant.org_id = 42',
    )
    expect(source.entities.messages?.query).toBe('SELECT * FROM (SELECT * FROM posts\n) AS chatferry_tenant WHERE chatferry_tenant.org_id = 42')
    expect(Object.isFrozen(c)).toBe(true)
  })

  it('a template query ending in semicolons or a line comment is wrapped whole, as generic-sql wraps its own', () => {
    const d = doc()
    const shared = (d.sources as { shared: { entities: Record<string, { query: string }> } }).shared
    shared.entities = { users: { query: 'SELECT id, name, org_id FROM users ;; ' }, messages: { query: 'SELECT * FROM posts -- every post' } }
    const source = tenantJobConfig(parse(d), 'one', APP).source as { entities: Record<string, { query: string } | undefined> }
    expect(source.entities.users?.query).toBe(
      'SELECT * FROM (SELECT id, name, org_id FROM users\n) AS chatferry_tenant WHERE chatferry_tenant.org_id = 42',
    )
    expect(source.entities.messages?.query).toBe(
      'SELECT * FROM (SELECT * FROM posts -- every post\n) AS chatferry_tenant WHERE chatferry_tenant.org_id = 42',
    )
  })

  it('a Mattermost template reads one team; a full block is used as is; tenant policies win', () => {
    const two = tenantJobConfig(fleet, 'two', { ...APP, region: 'us' })
    expect(two.source).toMatchObject({ connector: 'mattermost', team: 'two-team', groupName: '{team}-{channel}' })
    expect(two.target.quota.requestsPerMinute).toBe(600)
    const three = tenantJobConfig(fleet, 'three', APP)
    expect(three.source).toMatchObject({ connector: 'generic-sql', url: 'sqlite:/tmp/three.db' })
    expect(three.policies.retention.oldMessages).toBe('skip')
  })

  it('a text tenant value is quoted; without a baseUrl template the platform URL of the app', () => {
    const d = doc()
    ;(d.defaults as Record<string, unknown>).target = {}
    ;(d.tenants as Record<string, unknown>[])[0] = { id: 'one', name: 'One', source: { template: 'shared', tenantValue: 'org-7' } }
    const c = tenantJobConfig(parse(d), 'one', APP)
    expect((c.source as { entities: { users: { query: string } } }).entities.users.query).toContain("chatferry_tenant.org_id = 'org-7'")
    expect(c.target.baseUrl).toBe('https://app123.api-eu.cometchat.io/v3')
  })

  it('an unknown tenant is a ConfigError', () => {
    expect(() => tenantJobConfig(fleet, 'nobody', APP)).toThrow(/no tenant nobody/)
  })
})

describe('fleet file problems: every one at once, by tenant and path', () => {
  const tenant = (t: Record<string, unknown>) => doc({ tenants: [{ id: 'ok', name: 'Ok', source: { template: 'shared', tenantValue: 1 } }, t] })
  it.each([
    [
      'duplicate id',
      doc({ tenants: [...(doc().tenants as unknown[]), { id: 'one', name: 'Other', source: { template: 'shared', tenantValue: 2 } }] }),
      'tenants[3].id: duplicate tenant id one (also tenants[0])',
    ],
    [
      'unknown region',
      tenant({ id: 'x', name: 'X', region: 'mars', source: { template: 'shared', tenantValue: 2 } }),
      'tenants[1].region: tenant x: unknown region "mars"',
    ],
    ['missing source', tenant({ id: 'x', name: 'X' }), 'tenants[1].source: tenant x: is required'],
    [
      'unknown extension',
      tenant({ id: 'x', name: 'X', source: { template: 'shared', tenantValue: 2 }, app: { extensions: ['pollz'] } }),
      'tenants[1].app.extensions[0]: tenant x: unknown extension "pollz"',
    ],
    [
      'unknown template',
      tenant({ id: 'x', name: 'X', source: { template: 'nope', tenantValue: 2 } }),
      'tenants[1].source.template: tenant x: no shared source "nope"',
    ],
    [
      'generic-sql template without value',
      tenant({ id: 'x', name: 'X', source: { template: 'shared' } }),
      'tenants[1].source.tenantValue: tenant x: is required',
    ],
    ['mattermost template without team', tenant({ id: 'x', name: 'X', source: { template: 'mm' } }), 'tenants[1].source.team: tenant x: is required'],
    ['unsafe tenant value', tenant({ id: 'x', name: 'X', source: { template: 'shared', tenantValue: "1' OR '1'='1" } }), 'tenants[1].source'],
    [
      'same app name',
      tenant({ id: 'x', name: 'ok', source: { template: 'shared', tenantValue: 2 } }),
      'tenants[1].name: tenant x: app name "ok" is also tenants[0]\'s',
    ],
    [
      'app name too long',
      tenant({ id: 'x', name: 'n'.repeat(101), source: { template: 'shared', tenantValue: 2 } }),
      'tenants[1].name: tenant x: must be at most 100 characters',
    ],
    [
      'version 2',
      tenant({ id: 'x', name: 'X', source: { template: 'shared', tenantValue: 2 }, app: { version: '2' } }),
      'tenants[1].app.version: tenant x: must be "3"',
    ],
    [
      'bad webhook trigger',
      tenant({
        id: 'x',
        name: 'X',
        source: { template: 'shared', tenantValue: 2 },
        app: { webhooks: [{ id: 'h1', name: 'H', webhookURL: 'https://h.example', triggers: ['nope'] }] },
      }),
      'tenants[1].app.webhooks[0].triggers[0]: tenant x: unknown trigger "nope"',
    ],
    [
      'too many team members',
      tenant({
        id: 'x',
        name: 'X',
        source: { template: 'shared', tenantValue: 2 },
        app: { team: { admins: Array.from({ length: 26 }, (_, i) => `a${i}@x.example`) } },
      }),
      'tenants[1].app.team: tenant x: at most 25 team members',
    ],
    [
      'bad quota in the tenant',
      tenant({ id: 'x', name: 'X', source: { template: 'shared', tenantValue: 2 }, target: { quota: { requestsPerMinute: 0 } } }),
      'tenants[1].target.quota.requestsPerMinute: tenant x:',
    ],
    [
      'bad tenant id',
      tenant({ id: 'X Y', name: 'X', source: { template: 'shared', tenantValue: 2 } }),
      'tenants[1].id: tenant X Y: must be 1–39 characters',
    ],
    ['no tenants', doc({ tenants: [] }), 'tenants: must list at least one tenant'],
    ['an embedded ledger', doc({ state: { dir: '.chatferry' } }), 'state.url: is required'],
    [
      'a bad source block',
      tenant({ id: 'x', name: 'X', source: { connector: 'generic-sql', url: 'ftp://x', entities: {} } }),
      'tenants[1].source.url: tenant x: must be',
    ],
  ])('%s', (_name, d, expected) => {
    const problems = problemsOf(d)
    expect(
      problems.some((p) => p.startsWith(expected)),
      problems.join('\n'),
    ).toBe(true)
  })

  it('a problem of the defaults is named once, at defaults, not once per tenant', () => {
    const d = doc()
    ;(d.defaults as Record<string, unknown>).policies = { retention: { oldMessages: 'maybe' } }
    const problems = problemsOf(d)
    expect(problems.filter((p) => p.startsWith('defaults.policies.retention.oldMessages')).length).toBe(1)
    expect(problems.every((p) => p.startsWith('defaults.'))).toBe(true)
  })

  it('lists several tenants’ problems together, and masks secrets', () => {
    const d = doc({
      tenants: [
        {
          id: 'a',
          name: 'A',
          source: { connector: 'generic-sql', url: 'postgres://u:hunter2secret@db/x?sslmode=nope', entities: { users: { query: '' } } },
        },
        { id: 'a', name: 'B', region: 'mars', source: { template: 'shared', tenantValue: 1 } },
      ],
    })
    const problems = problemsOf(d)
    expect(problems.length).toBeGreaterThanOrEqual(3)
    expect(problems.join('\n')).not.toContain('hunter2secret')
  })

  it('an unset ${VAR} is named, once', () => {
    const problems = problemsOf(doc(), {})
    // The reference itself is masked like any value under a secret key (as chatferry.yaml's are).
    expect(problems).toEqual(['management.secret: environment variable MGMT_SECRET is not set (referenced as ***)'])
  })

  it('fleetPath writes indexes in brackets', () => {
    expect(fleetPath(['tenants', 3, 'source', 'url'])).toBe('tenants[3].source.url')
    expect(fleetPath(['defaults', 'app', 'extensions', '0'])).toBe('defaults.app.extensions[0]')
  })
})

describe('key vault', () => {
  const key = randomBytes(32)
  const ctx = { fleetId: 'f', tenantId: 't', appId: 'a' }

  it('seals and opens; each seal differs; the plaintext is not in the sealed text', () => {
    const v = keyVault(key)
    const a = v.seal('the-api-key-0123', ctx)
    const b = v.seal('the-api-key-0123', ctx)
    expect(a).not.toBe(b)
    expect(a).not.toContain('the-api-key-0123')
    expect(a).toMatch(/^v1:[\w-]+:[\w-]+:[\w-]+$/)
    expect(v.open(a, ctx)).toBe('the-api-key-0123')
  })

  it.each([
    ['another key', () => keyVault(randomBytes(32)).open(keyVault(key).seal('x', ctx), ctx)],
    ['another tenant', () => keyVault(key).open(keyVault(key).seal('x', ctx), { ...ctx, tenantId: 'u' })],
    ['another app', () => keyVault(key).open(keyVault(key).seal('x', ctx), { ...ctx, appId: 'b' })],
    [
      'a changed ciphertext',
      () =>
        keyVault(key).open(
          keyVault(key)
            .seal('xyz', ctx)
            .replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')),
          ctx,
        ),
    ],
    ['not the format', () => keyVault(key).open('plain-text', ctx)],
  ])('refuses %s', (_name, open) => {
    expect(open).toThrow(VaultError)
  })

  it.each([
    [undefined, /is not set/],
    ['', /is not set/],
    ['short', /must be 32 random bytes/],
    [randomBytes(16).toString('hex'), /must be 32 random bytes/],
    [randomBytes(32).toString('hex'), undefined],
    [randomBytes(32).toString('base64'), undefined],
    [randomBytes(32).toString('base64url'), undefined],
  ])('CHATFERRY_FLEET_KEY %#', (value, problem) => {
    const parsed = parseFleetKey(value)
    if (problem === undefined) {
      expect('key' in parsed && parsed.key.length).toBe(32)
    } else {
      expect('problem' in parsed && parsed.problem).toMatch(problem)
      expect(() => openKeyVault({ [FLEET_KEY_ENV]: value })).toThrow(ConfigError)
    }
  })

  it('the key id is a fingerprint of the key, not the key', () => {
    const v = keyVault(key)
    expect(v.keyId).toMatch(/^[0-9a-f]{12}$/)
    expect(key.toString('hex')).not.toContain(v.keyId)
    expect(keyVault(key).keyId).toBe(v.keyId)
  })
})
