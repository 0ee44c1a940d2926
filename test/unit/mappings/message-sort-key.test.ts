/**
 * The message sort key's digits are written without `String(ms)` (message-sort-key.ts): they must be
 * exactly what `String(Math.floor(ms)).padStart(15, '0')` gives, for every number a record can hold.
 */
import { describe, expect, it } from 'vitest'

import { partSortKey, sortBaseOf, sortDigits } from '../../../mappings/message-sort-key.ts'

const reference = (ms: number) => String(Math.floor(ms)).padStart(15, '0')

describe('message sort key', () => {
  it('writes the same digits as String(Math.floor(ms)).padStart(15, "0")', () => {
    const edges = [0, 0.5, 1, 9, 10, 99_999_999, 100_000_000, 100_000_001, 100_000_009, 1_000_000_007, 1_704_186_000_000, 1_704_186_000_123.9]
    const more = [
      999_999_999_999_999,
      1e15,
      1e15 + 2,
      1e21,
      1e22,
      -1,
      -0.5,
      -1_704_186_000_000,
      Number.MAX_SAFE_INTEGER,
      Number.NaN,
      Infinity,
      -Infinity,
    ]
    for (const ms of [...edges, ...more]) {
      expect(sortDigits(ms), String(ms)).toBe(reference(ms))
    }
    // Every number of digits and every position of an inner zero run, around the halves' boundary.
    for (let digits = 1; digits <= 15; digits++) {
      for (const base of [10 ** (digits - 1), 10 ** digits - 1, 10 ** (digits - 1) + 7]) {
        expect(sortDigits(base), String(base)).toBe(reference(base))
      }
    }
    for (let i = 0; i < 2000; i++) {
      const ms = Math.floor(Math.abs(Math.sin(i + 1)) * 10 ** (i % 16))
      expect(sortDigits(ms), String(ms)).toBe(reference(ms))
    }
  })

  it('orders by time, then muid, then part', () => {
    const a = sortBaseOf(1_704_186_000_000, 'm1')
    const keys = [partSortKey(a, 1), partSortKey(a, 2), partSortKey(a, 10), partSortKey(sortBaseOf(1_704_186_000_001, 'a'), 1)]
    expect([...keys].sort()).toEqual(keys)
    expect(partSortKey(a, 2)).toBe('001704186000000:m1:0002')
    expect(partSortKey(a, 12)).toBe('001704186000000:m1:0012')
  })
})
