import { describe, expect, it } from 'vitest'

import { rateLimitPause, retryWaitFromText } from '../../../src/load/pause-on-rate-limit.ts'
import { type QuotaSlots, quotaSlots, requestsPerWindow, retryReservationMs, slotWaits } from '../../../src/load/quota-budget.ts'
import { readRateLimit } from '../../../src/target/http.ts'

describe('requestsPerWindow', () => {
  it.each([
    ['the documented quota, a minute window', 60, 60_000, 60],
    ['a 10 s window', 60, 10_000, 10],
    ['a 1 s window (tests, demo)', 600, 1_000, 10],
    ['a half-minute window', 120, 30_000, 60],
    ['a window longer than a minute', 60, 120_000, 120],
  ])('%s: %d/min over %d ms → %d', (_name, perMinute, windowMs, expected) => {
    expect(requestsPerWindow(perMinute, windowMs)).toBe(expected)
  })
})

describe('quotaSlots', () => {
  it.each<[string, Parameters<typeof quotaSlots>[0], QuotaSlots]>([
    // guard = max(1% of the window, 250 ms); interval = (window + guard) / requests.
    ['60 per minute', { requestsPerWindow: 60, windowMs: 60_000 }, { guardMs: 600, intervalMs: 1010, maxAheadMs: 2000, maxPerReservation: 1 }],
    ['window defaults to a minute', { requestsPerWindow: 60 }, { guardMs: 600, intervalMs: 1010, maxAheadMs: 2000, maxPerReservation: 1 }],
    [
      '600 per minute: several slots per reservation',
      { requestsPerWindow: 600, windowMs: 60_000 },
      { guardMs: 600, intervalMs: 101, maxAheadMs: 2000, maxPerReservation: 19 },
    ],
    [
      'short window: the 250 ms floor of the guard',
      { requestsPerWindow: 10, windowMs: 10_000 },
      { guardMs: 250, intervalMs: 1025, maxAheadMs: 2000, maxPerReservation: 1 },
    ],
    [
      'one per minute: may reserve one interval ahead',
      { requestsPerWindow: 1, windowMs: 60_000 },
      { guardMs: 600, intervalMs: 60_600, maxAheadMs: 60_600, maxPerReservation: 1 },
    ],
    ['a 1 s window', { requestsPerWindow: 4, windowMs: 1000 }, { guardMs: 250, intervalMs: 312.5, maxAheadMs: 2000, maxPerReservation: 6 }],
    [
      'explicit guard and look-ahead',
      { requestsPerWindow: 100, windowMs: 1000, guardMs: 0, maxAheadMs: 5000 },
      { guardMs: 0, intervalMs: 10, maxAheadMs: 5000, maxPerReservation: 500 },
    ],
  ])('%s', (_name, options, expected) => {
    expect(quotaSlots(options)).toEqual(expected)
  })

  it.each([
    [60, 60_000],
    [600, 60_000],
    [7, 1000],
    [1, 60_000],
  ])('never more than %d slots in any closed window of %d ms', (perWindow, windowMs) => {
    const { intervalMs } = quotaSlots({ requestsPerWindow: perWindow, windowMs })
    // Slots 0, interval, 2·interval, … that fall in [0, window], both ends included: without the
    // guard there would be one too many (window / (window / n) + 1 = n + 1).
    expect(Math.floor(windowMs / intervalMs) + 1).toBeLessThanOrEqual(perWindow)
  })
})

describe('slotWaits', () => {
  it.each([
    ['one caller, slot ahead', { slotMs: 1000, nowMs: 900, tatMs: 1010 }, 1, 10, [100]],
    ['three callers share a reservation', { slotMs: 1000, nowMs: 900, tatMs: 1030 }, 3, 10, [100, 110, 120]],
    ['slot already passed: the first goes at once', { slotMs: 500, nowMs: 900, tatMs: 1010 }, 2, 505, [-400, 105]],
  ])('%s', (_name, reservation, n, intervalMs, expected) => {
    expect(slotWaits(reservation, n, intervalMs)).toEqual(expected)
  })
})

describe('retryReservationMs', () => {
  const slots = quotaSlots({ requestsPerWindow: 600, windowMs: 60_000 }) // interval 101, maxAhead 2000
  it.each([
    ['next slot 5 s ahead, no jitter', { slotMs: null, nowMs: 10_000, tatMs: 15_000 }, 0, 3000],
    ['next slot 5 s ahead, half an interval of jitter', { slotMs: null, nowMs: 10_000, tatMs: 15_000 }, 0.5, 3050.5],
    ['a 429 pause of a minute', { slotMs: null, nowMs: 0, tatMs: 60_000 }, 0, 58_000],
    ['slot near already: the 10 ms floor', { slotMs: null, nowMs: 10_000, tatMs: 11_000 }, 0, 10],
  ])('%s', (_name, reservation, random, expected) => {
    expect(retryReservationMs(reservation, slots, random)).toBeCloseTo(expected, 6)
  })
})

describe('rateLimitPause', () => {
  it.each([
    ['a header named a wait', 5000, undefined, 1010, 120_000, 5000, 'header'],
    ['the header wins over the text', 5000, 58_000, 1010, 120_000, 5000, 'header'],
    ['no header: the text', undefined, 58_000, 1010, 120_000, 58_000, 'text'],
    ['no wait named: two slot intervals', undefined, undefined, 1010, 120_000, 2020, 'default'],
    ['a wait beyond the cap is capped', 300_000, undefined, 1010, 120_000, 120_000, 'header'],
    ['a text wait beyond the cap is capped', undefined, 300_000, 1010, 120_000, 120_000, 'text'],
    ['a zero wait is honoured as zero', 0, undefined, 1010, 120_000, 0, 'header'],
    ['a smaller cap', 30_000, undefined, 101, 10_000, 10_000, 'header'],
  ] as const)('%s', (_name, headerMs, textMs, intervalMs, maxRetryAfterMs, expected, source) => {
    expect(rateLimitPause({ headerMs, textMs }, intervalMs, maxRetryAfterMs)).toEqual({ ms: expected, source })
  })

  // From the 429's headers to the pause: Retry-After first, then X-RateLimit-Reset when nothing is left.
  const now = 1_700_000_000_000
  it.each<[string, Record<string, string>, number]>([
    ['Retry-After in seconds', { 'Retry-After': '15' }, 15_000],
    ['Retry-After as an HTTP date', { 'Retry-After': new Date(now + 7000).toUTCString() }, 7000],
    ['X-RateLimit-Reset with nothing remaining', { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(now / 1000 + 42) }, 42_000],
    ['older spelling X-Rate-Limit-Reset', { 'X-Rate-Limit-Remaining': '0', 'X-Rate-Limit-Reset': String(now / 1000 + 9) }, 9000],
    ['Retry-After wins over the reset', { 'Retry-After': '3', 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(now / 1000 + 60) }, 3000],
    ['a reset with requests remaining names no wait', { 'X-RateLimit-Remaining': '5', 'X-RateLimit-Reset': String(now / 1000 + 60) }, 2020],
    ['a reset ten minutes away is capped', { 'X-RateLimit-Remaining': '0', 'X-RateLimit-Reset': String(now / 1000 + 600) }, 120_000],
  ])('429 with %s', (_name, headers, expected) => {
    const { retryAfterMs } = readRateLimit(new Headers(headers), now)
    expect(rateLimitPause({ headerMs: retryAfterMs, textMs: undefined }, 1010, 120_000).ms).toBe(expected)
  })
})

describe('retryWaitFromText', () => {
  const documented = 'Too many requests for data import API. 60 per minute is the maximum request allowed. Please retry for seconds after 58.'
  it.each<[string, string | undefined, number | undefined]>([
    ['the documented wording', documented, 58_000],
    ['as the client words the error', `data_import.messages failed (HTTP 429): ERR_TOO_MANY_REQUESTS: ${documented}`, 58_000],
    ['the documented wording, one second', 'Please retry for seconds after 1.', 1000],
    ['the older sandbox wording', 'Too many requests. 60 per minute is the maximum allowed. Please retry after 12 seconds.', 12_000],
    ['the older wording, singular', 'Please retry after 1 second.', 1000],
    ['any case', 'PLEASE RETRY FOR SECONDS AFTER 7.', 7000],
    ['fractional seconds', 'Please retry for seconds after 1.5.', 1500],
    ['no number', 'Too many requests for data import API. Please retry later.', undefined],
    ['a number that is not a wait', '60 per minute is the maximum request allowed.', undefined],
    ['"after" without a unit is not the older wording', 'Please retry after 5 minutes.', undefined],
    ['no text', undefined, undefined],
    ['empty text', '', undefined],
  ])('%s', (_name, text, expected) => {
    expect(retryWaitFromText(text)).toBe(expected)
  })
})
