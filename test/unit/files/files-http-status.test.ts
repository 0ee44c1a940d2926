/**
 * What an HTTP answer means for a file (src/files/read/http-status.ts), the content key and public
 * URL of a copy (store-key.ts, public-url.ts), URLs as errors show them (shown-url.ts) and a
 * host's rate as p-queue settings (host-pacer.ts): table tests of the pure parts.
 */
import { describe, expect, it } from 'vitest'

import { contentKey, keyExtension } from '../../../src/files/copy/store-key.ts'
import { queueOptions } from '../../../src/files/pace/host-pacer.ts'
import { parseContentRange } from '../../../src/files/read/http-reader.ts'
import { retryAfterMs, statusFailure } from '../../../src/files/read/http-status.ts'
import { shownLocator, shownUrl } from '../../../src/files/read/shown-url.ts'
import { normalisePrefix, publicUrlOf } from '../../../src/files/store/public-url.ts'

describe('statusFailure', () => {
  const now = Date.parse('2026-01-01T00:00:00Z')
  it.each([
    [404, null, 'missing', false, undefined],
    [410, null, 'missing', false, undefined],
    [401, null, 'denied', false, undefined],
    [403, null, 'denied', false, undefined],
    [429, '7', 'rate-limited', true, 7000],
    [429, 'Thu, 01 Jan 2026 00:00:30 GMT', 'rate-limited', true, 30_000],
    [429, null, 'rate-limited', true, undefined],
    [503, '2', 'unavailable', true, 2000],
    [500, null, 'unavailable', true, undefined],
    [408, null, 'unavailable', true, undefined],
    [400, null, 'unavailable', false, undefined],
  ] as const)('HTTP %i (Retry-After %s) is %s, retryable %s, after %s ms', (status, after, cause, retryable, ms) => {
    const err = statusFailure(status, 'https://h/p', after, now)
    expect([err.fileCause, err.retryable, err.retryAfterMs]).toEqual([cause, retryable, ms])
    expect(err.message).toContain('https://h/p')
  })
  it('reads a past HTTP date as no wait and nonsense as none', () => {
    expect(retryAfterMs('Wed, 31 Dec 2025 23:00:00 GMT', now)).toBe(0)
    expect(retryAfterMs('soon', now)).toBeUndefined()
    expect(retryAfterMs('', now)).toBeUndefined()
  })
})

describe('parseContentRange', () => {
  it.each([
    ['bytes 100-199/1000', { start: 100, total: 1000 }],
    ['bytes 0-0/*', { start: 0 }],
    ['bytes */1000', undefined],
    [null, undefined],
  ])('%s', (header, expected) => {
    expect(parseContentRange(header)).toEqual(expected)
  })
})

describe('URLs in errors', () => {
  it.each([
    ['https://user:pw@files.example.com/a/b.png?t=xoxe-123#frag', 'https://files.example.com/a/b.png'],
    ['http://127.0.0.1:8080/x', 'http://127.0.0.1:8080/x'],
    ['not a url', '(a URL that does not parse)'],
  ])('%s is shown as %s', (url, shown) => {
    expect(shownUrl(url)).toBe(shown)
  })
  it('shows a locator by its reader and its ref, a URL ref without its query', () => {
    expect(shownLocator({ reader: 'slack-export', ref: 'https://files.slack.com/F1/x.png?t=xoxe', host: 'files.slack.com' })).toBe(
      'slack-export https://files.slack.com/F1/x.png',
    )
    expect(shownLocator({ reader: 'mattermost', ref: '20240101/teams/x/a.png', host: 'local' })).toBe('mattermost 20240101/teams/x/a.png')
  })
})

describe('content keys and public URLs', () => {
  const hex = 'ab'.repeat(32)
  it.each([
    ['png', 'x.jpg', `sha256/ab/${hex}.png`],
    [undefined, 'Notes.TXT', `sha256/ab/${hex}.txt`],
    [undefined, 'no-extension', `sha256/ab/${hex}`],
    [undefined, 'evil.ph p', `sha256/ab/${hex}`],
    [undefined, 'a.verylongextension', `sha256/ab/${hex}`],
  ])('sniffed %s, named %s → %s', (sniffed, name, key) => {
    expect(contentKey(hex, keyExtension(sniffed, name))).toBe(key)
  })
  it('refuses a hash that is not hex SHA-256', () => {
    expect(() => contentKey('../etc', undefined)).toThrow(/not a hex SHA-256/)
  })
  it('joins base, prefix and key, each segment encoded, never a query', () => {
    expect(publicUrlOf('https://cdn.example.com/files/', 'chat/sha256/ab/x y.png')).toBe('https://cdn.example.com/files/chat/sha256/ab/x%20y.png')
    expect(normalisePrefix('/chat')).toBe('chat/')
    expect(normalisePrefix('')).toBe('')
    expect(normalisePrefix('a/b/')).toBe('a/b/')
  })
})

describe('host pacing as p-queue settings', () => {
  it.each([
    [10, { intervalCap: 10, interval: 1000 }],
    [0.5, { intervalCap: 1, interval: 2000 }],
    [2.5, { intervalCap: 3, interval: 1200 }],
    [10_000, { intervalCap: 10_000, interval: 1000 }],
  ])('%s per second', (rps, expected) => {
    expect(queueOptions({ concurrency: 3, requestsPerSecond: rps })).toEqual({ concurrency: 3, strict: true, ...expected })
  })
})
