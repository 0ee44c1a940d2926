import { describe, expect, it } from 'vitest'

import { createPlatformClient } from '../../../src/target/client.ts'
import { PlatformError } from '../../../src/target/errors.ts'
import { transportProblem } from '../../../src/target/transport.ts'

describe('transportProblem', () => {
  it.each([
    ['https://app.api-us.cometchat.io/v3', undefined],
    ['https://10.0.0.7/v3', undefined],
    ['http://127.0.0.1:4010/apps/a/v3', undefined],
    ['http://127.200.1.1/v3', undefined],
    ['http://localhost:4010/v3', undefined],
    ['http://[::1]:4010/v3', undefined],
    ['http://sandbox.localhost/v3', undefined],
    ['http://10.0.0.7/v3', /only allowed for loopback.*use https:\/\/ for 10\.0\.0\.7/],
    ['http://example.com/v3', /use https:\/\/ for example\.com/],
    ['http://128.0.0.1/v3', /use https:\/\/ for 128\.0\.0\.1/],
    ['ftp://127.0.0.1/v3', /protocol ftp:/],
  ])('%s → %s', (url, expected) => {
    const problem = transportProblem(new URL(url))
    if (expected === undefined) {
      expect(problem).toBeUndefined()
    } else {
      expect(problem).toMatch(expected)
    }
  })
})

describe('the HTTP layer enforces the transport rule itself (no config involved)', () => {
  it.each(['http://example.com/v3', 'http://10.1.2.3:8080/v3', 'http://user:pw@example.org/v3'])('refuses %s before sending', async (baseUrl) => {
    const client = createPlatformClient({ baseUrl, apiKey: 'secret-key-123', timeoutMs: 2000 })
    const err = await client.importRaw('users', ['u1'], '{"users":{"u1":{"uid":"u1","name":"U"}}}').catch((e: unknown) => e)
    expect(err).toBeInstanceOf(PlatformError)
    const e = err as PlatformError
    expect(e.code).toBe('INSECURE_TRANSPORT')
    expect(e.retryable).toBe(false)
    expect(e.message).toMatch(/data_import\.users failed: INSECURE_TRANSPORT: plain http:\/\/ is only allowed/)
    expect(e.message).not.toMatch(/secret-key-123|pw@/)
  })
})
