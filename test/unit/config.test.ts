import { describe, expect, it } from 'vitest'
import { defaultBaseUrl, isLoopbackHost, parseConfig } from '../../src/config.ts'
import { ConfigError } from '../../src/errors.ts'

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
    if (ok) expect(parseConfig(yaml, 'c.yaml', {}).target.baseUrl).toBe(baseUrl.replace(/\/+$/, ''))
    else expect(problemsOf(yaml, {}).map((p) => p.path)).toEqual(['target.baseUrl'])
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
    expect(problems[0]?.message).toMatch(/line \d+/)
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
