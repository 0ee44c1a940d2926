import { describe, expect, it } from 'vitest'

import { ConfigError } from '../../../src/errors.ts'
import { parseConfig } from '../../../src/job/config.ts'
import { defaultBaseUrl } from '../../../src/target/config.ts'
import { isLoopbackHost } from '../../../src/target/transport.ts'

const env = { CHATFERRY_API_KEY: 'k'.repeat(40), MGMT_KEY: 'mk', MGMT_SECRET: 'ms' }

function problemsOf(yaml: string, environment: NodeJS.ProcessEnv = env) {
  try {
    parseConfig(yaml, 'test.yaml', environment)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems
  }
  throw new Error('expected the configuration to be refused')
}

describe('parseConfig', () => {
  it('applies the documented defaults and freezes the result', () => {
    const config = parseConfig('target:\n  appId: My-App\n  region: eu\n  apiKey: ${CHATFERRY_API_KEY}\n', 'c.yaml', env)
    expect(config.target.baseUrl).toBe('https://my-app.api-eu.cometchat.io/v3')
    expect(config.target.apiKey).toBe(env.CHATFERRY_API_KEY)
    expect(config.target.quota).toEqual({ requestsPerMinute: 60, itemsPerRequest: 50 })
    expect(config.state).toEqual({ dir: '.chatferry' })
    expect(Object.isFrozen(config)).toBe(true)
    expect(Object.isFrozen(config.target.quota)).toBe(true)
  })

  it('changes: defaults to apply and the documented vanished policies; every mistake is listed with its path', () => {
    const config = parseConfig('target:\n  appId: a\n  region: eu\n  apiKey: ${CHATFERRY_API_KEY}\n', 'c.yaml', env)
    expect(config.changes).toEqual({
      users: 'apply',
      groups: 'apply',
      members: 'apply',
      edits: 'apply',
      deletions: 'apply',
      conflicts: 'report',
      vanished: { users: 'delete', groups: 'report', members: 'delete', messages: 'report', maxShare: 0.5 },
    })
    const yaml = [
      'target: { appId: a, region: eu, apiKey: "${CHATFERRY_API_KEY}" }',
      'changes:',
      '  users: update',
      '  edits: report',
      '  vanished: { groups: apply, posts: delete }',
    ].join('\n')
    expect(
      problemsOf(yaml)
        .map((p) => p.path)
        .sort(),
    ).toEqual(['changes.users', 'changes.vanished', 'changes.vanished.groups'])
  })

  it('reports five different mistakes at once, each with its path', () => {
    const yaml = [
      'target:',
      '  appId: demo',
      '  region: mars', // 1: not a region
      '  apiKey: ${MISSING_KEY}', // 2: unset variable
      '  baseUrl: http://api.example.com/v3', // 3: plain http to a remote host
      '  quota: { requestsPerMinute: 60, itemsPerRequest: 80 }', // 4: over the documented maximum
      'management:',
      '  secret: ${MGMT_SECRET}', // 5: key missing
      'stat:', // 6: unknown top-level key
      '  url: postgres://x',
    ].join('\n')
    const problems = problemsOf(yaml)
    const byPath = Object.fromEntries(problems.map((p) => [p.path, p.message]))
    expect(byPath['target.region']).toMatch(/us|eu|in/)
    expect(byPath['target.apiKey']).toMatch(/MISSING_KEY is not set/)
    expect(byPath['target.baseUrl']).toMatch(/only allowed for loopback/)
    expect(byPath['target.quota.itemsPerRequest']).toMatch(/50/)
    expect(byPath['management.key']).toBe('is required')
    expect(byPath['']).toMatch(/unknown key: stat/)
    expect(problems).toHaveLength(6)
  })

  it.each([
    ['http://127.0.0.1:4010/apps/a/v3', true],
    ['http://localhost:4010/v3', true],
    ['http://[::1]:4010/v3', true],
    ['https://a.api-us.cometchat.io/v3', true],
    ['http://10.0.0.5/v3', false],
    ['ftp://127.0.0.1/v3', false],
    ['not a url', false],
  ])('baseUrl %s accepted: %s', (baseUrl, ok) => {
    const yaml = `target: { appId: a, region: us, apiKey: k, baseUrl: "${baseUrl}" }`
    if (ok) {
      expect(parseConfig(yaml, 'c.yaml', {}).target.baseUrl).toBe(baseUrl.replace(/\/+$/, ''))
    } else {
      expect(problemsOf(yaml, {}).map((p) => p.path)).toEqual(['target.baseUrl'])
    }
  })

  it.each([
    ['127.0.0.1', true],
    ['127.8.9.10', true],
    ['localhost', true],
    ['sandbox.localhost', true],
    ['::1', true],
    ['128.0.0.1', false],
    ['example.com', false],
  ])('isLoopbackHost(%s) = %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected)
  })

  it('reports YAML syntax errors with their line', () => {
    const problems = problemsOf('target:\n  appId: [unclosed\n')
    expect(problems[0]).toMatchObject({ path: 'target.appId.0', message: expect.stringMatching(/^YAML syntax error at test\.yaml:3:1: /) })
  })

  // Each file breaks the YAML syntax next to a literal password and API key; the problem names
  // file:line:column and the key path, and repeats neither secret.
  it.each([
    [
      'an unclosed quote',
      'target:\n  appId: a\n  apiKey: "cf-test-secret-KEY1\nsource:\n  url: postgres://mm:cf-test-secret-PW1@db/mm\n',
      'target.apiKey',
    ],
    ['a value that starts a nested mapping', 'target:\n  apiKey: cf-test-secret-KEY1 url: postgres://mm:cf-test-secret-PW1@db/mm\n', 'target.apiKey'],
    ['an unexpected token', 'target:\n  apiKey: cf-test-secret-KEY1\nsource: {url: "postgres://mm:cf-test-secret-PW1@db/mm" x}\n', 'source.url'],
    ['a tab', 'target:\n\tapiKey: cf-test-secret-KEY1\n  url: postgres://mm:cf-test-secret-PW1@db/mm\n', ''],
    ['a stray scalar token', '- x\ncf-test-secret-KEY1: postgres://mm:cf-test-secret-PW1@db/mm\n', '0'],
  ])('a YAML syntax error (%s) shows where, never the source text', (_what, yaml, path) => {
    const problems = problemsOf(yaml)
    expect(problems[0]?.message).toMatch(/YAML syntax error at test\.yaml:\d+:\d+: /)
    expect(problems[0]?.path).toBe(path)
    expect(JSON.stringify(problems)).not.toMatch(/cf-test-secret/)
  })

  it('masks secrets in any problem, whatever the validator wrote', () => {
    const problems = problemsOf('target: { appId: a, region: us, apiKey: k, baseUrl: "http//me:cf-test-secret-PW2@host/v3" }')
    expect(problems[0]?.path).toBe('target.baseUrl')
    expect(problems[0]?.message).toContain('me:***@host')
    expect(JSON.stringify(problems)).not.toContain('cf-test-secret')
  })

  it.each([
    [{ load: { leaseSeconds: 10 } }, {}, true],
    [{ load: { leaseSeconds: 33 } }, {}, false],
    [{ load: { leaseSeconds: 32 } }, {}, true],
    [{}, { CHATFERRY_LOAD_LEASE_SECONDS: '10' }, true],
    [{ load: { leaseSeconds: 120 } }, {}, false],
  ])('the lease must outlast target.timeoutMs 30000 (%j, env %j): refused %s', (extra, extraEnv, refused) => {
    const yaml = JSON.stringify({ target: { appId: 'a', region: 'us', apiKey: 'k', timeoutMs: 30000 }, ...extra })
    if (!refused) {
      return void expect(parseConfig(yaml, 'c.yaml', { ...env, ...extraEnv }).target.timeoutMs).toBe(30000)
    }
    const problems = problemsOf(yaml, { ...env, ...extraEnv })
    expect(problems).toEqual([{ path: 'load.leaseSeconds', message: expect.stringMatching(/must exceed target\.timeoutMs \(30000 ms\)/) }])
  })

  it('lists the cross-field problem beside every other problem', () => {
    const problems = problemsOf('target: { appId: a, region: mars, apiKey: k, timeoutMs: 30000 }\nload: { leaseSeconds: 10, concurrency: 0 }\n')
    expect(problems.map((p) => p.path).sort()).toEqual(['load.concurrency', 'load.leaseSeconds', 'target.region'])
  })

  it('refuses a file that is not a mapping', () => {
    expect(problemsOf('- a\n- b\n')[0]?.message).toMatch(/mapping/)
  })

  it('takes ${VAR:-default} fallbacks and never prints secret values in problems', () => {
    const config = parseConfig('target: { appId: a, region: us, apiKey: "${NOPE:-fallback}" }', 'c.yaml', {})
    expect(config.target.apiKey).toBe('fallback')
    const problems = problemsOf('target: { appId: a, region: us, apiKey: "${SECRET_KEY}", quota: { requestsPerMinute: 0 } }', {
      SECRET_KEY: 'super-secret-value',
    })
    expect(JSON.stringify(problems)).not.toContain('super-secret-value')
  })

  it('builds the documented default base URL', () => {
    expect(defaultBaseUrl('abc', 'in')).toBe('https://abc.api-in.cometchat.io/v3')
  })
})
