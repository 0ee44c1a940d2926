/**
 * `target.chatQuota.requestsPerMinute`: its documented default, its bounds (refused before any
 * I/O, naming the path), and that it is the chat pacing `verify` and `plan --check-target` use
 * unless `--chat-rpm` says otherwise.
 */
import { describe, expect, it } from 'vitest'

import { ConfigError } from '../../../src/errors.ts'
import { parseConfig } from '../../../src/job/config.ts'
import { DEFAULT_CHAT_REQUESTS_PER_MINUTE } from '../../../src/target/config.ts'

const env = { KEY: 'k'.repeat(40) }
const base = 'target: { appId: a, region: us, apiKey: "${KEY}"'

function problemPaths(yaml: string): string[] {
  try {
    parseConfig(yaml, 'c.yaml', env)
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError)
    return (err as ConfigError).problems.map((p) => p.path)
  }
  throw new Error('expected the configuration to be refused')
}

describe('target.chatQuota.requestsPerMinute', () => {
  it('defaults to 1000, the one value verify and the pre-flight fall back to', () => {
    expect(parseConfig(`${base} }`, 'c.yaml', env).target.chatQuota).toEqual({ requestsPerMinute: 1000 })
    expect(DEFAULT_CHAT_REQUESTS_PER_MINUTE).toBe(1000)
  })

  it('takes a value of the operator', () => {
    expect(parseConfig(`${base}, chatQuota: { requestsPerMinute: 250 } }`, 'c.yaml', env).target.chatQuota.requestsPerMinute).toBe(250)
  })

  it.each([
    { name: 'zero', value: '0' },
    { name: 'a fraction', value: '1.5' },
    { name: 'over 100000', value: '100001' },
    { name: 'a string', value: '"fast"' },
  ])('refuses $name, naming target.chatQuota.requestsPerMinute', ({ value }) => {
    expect(problemPaths(`${base}, chatQuota: { requestsPerMinute: ${value} } }`)).toContain('target.chatQuota.requestsPerMinute')
  })

  it('refuses an unknown key beside it', () => {
    expect(problemPaths(`${base}, chatQuota: { requestsPerHour: 5 } }`).join(' ')).toMatch(/target\.chatQuota/)
  })
})
