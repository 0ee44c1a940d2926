import { describe, expect, it } from 'vitest'

import { parseImportResults } from '../../../src/target/client.ts'
import { isRetryableStatus } from '../../../src/target/errors.ts'
import { readRateLimit } from '../../../src/target/http.ts'
import { ImportResponse } from '../../../src/target/schemas.ts'

describe('parseImportResults', () => {
  it.each([
    {
      name: 'results keyed by our keys',
      entity: 'users' as const,
      sent: ['u1', 'u2'],
      body: {
        data: { u1: { success: true, data: { uid: 'u1' } }, u2: { success: false, error: { code: 'ERR_UID_ALREADY_EXISTS', message: 'exists' } } },
      },
      expected: { u1: { ok: true, data: { uid: 'u1' } }, u2: { ok: false, code: 'ERR_UID_ALREADY_EXISTS', message: 'exists' } },
      missing: [],
    },
    {
      name: 'keys answered lowercased',
      entity: 'users' as const,
      sent: ['UserA'],
      body: { data: { usera: { success: true } } },
      expected: { UserA: { ok: true } },
      missing: [],
    },
    {
      name: 'older response keyed by message id, matched through data.muid',
      entity: 'messages' as const,
      sent: ['m-1', 'm-2'],
      body: { data: { '201': { success: true, data: { id: '201', muid: 'm-1' } } } },
      expected: { 'm-1': { ok: true, data: { id: '201', muid: 'm-1' } } },
      missing: ['m-2'],
    },
    {
      name: 'nested data.data variant',
      entity: 'messages' as const,
      sent: ['m-3'],
      body: { data: { '7': { success: true, data: { data: { muid: 'm-3' } } } } },
      expected: { 'm-3': { ok: true, data: { data: { muid: 'm-3' } } } },
      missing: [],
    },
    {
      name: 'error as a bare string',
      entity: 'groups' as const,
      sent: ['g1'],
      body: { data: { g1: { success: false, error: 'ERR_GUID_ALREADY_EXISTS' } } },
      expected: { g1: { ok: false, code: 'ERR_GUID_ALREADY_EXISTS', message: 'ERR_GUID_ALREADY_EXISTS' } },
      missing: [],
    },
    {
      name: 'error with only a message',
      entity: 'groups' as const,
      sent: ['g1'],
      body: { data: { g1: { success: false, error: { message: 'bad' } } } },
      expected: { g1: { ok: false, code: 'ERR_UNKNOWN', message: 'bad' } },
      missing: [],
    },
    {
      name: 'keys we did not send are ignored',
      entity: 'users' as const,
      sent: ['a'],
      body: { data: { zzz: { success: true } } },
      expected: {},
      missing: ['a'],
    },
  ])('$name', ({ entity, sent, body, expected, missing }) => {
    const parsed = parseImportResults(entity, sent, ImportResponse.parse(body))
    expect(Object.fromEntries(parsed.results)).toEqual(expected)
    expect(parsed.missing).toEqual(missing)
  })
})

describe('readRateLimit', () => {
  const now = 1_700_000_000_000
  it.each([
    [
      'newer spelling',
      { 'X-RateLimit-Limit': '60', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1700000030' },
      { limit: 60, remaining: 0, resetAtMs: 1_700_000_030_000, retryAfterMs: 30_000 },
    ],
    [
      'older spelling',
      { 'X-Rate-Limit': '60', 'X-Rate-Limit-Remaining': '5', 'X-Rate-Limit-Reset': '1700000030' },
      { limit: 60, remaining: 5, resetAtMs: 1_700_000_030_000 },
    ],
    [
      'Retry-After seconds wins',
      { 'Retry-After': '15', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': '1700000030' },
      { remaining: 0, resetAtMs: 1_700_000_030_000, retryAfterMs: 15_000 },
    ],
    ['Retry-After as an HTTP date', { 'Retry-After': new Date(now + 5000).toUTCString() }, { retryAfterMs: 5000 }],
    ['nothing', {}, {}],
  ])('%s', (_name, headers, expected) => {
    expect(readRateLimit(new Headers(headers), now)).toEqual(expected)
  })
})

describe('isRetryableStatus', () => {
  it.each([
    [400, false],
    [401, false],
    [404, false],
    [408, true],
    [429, true],
    [500, true],
    [503, true],
  ])('%i → %s', (status, expected) => expect(isRetryableStatus(status)).toBe(expected))
})
