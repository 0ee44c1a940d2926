/** Stream's timestamps: the UTC fast path reads every string as the general path (RFC 3339 + Date.parse) does. */
import { describe, expect, it } from 'vitest'

import { timeMs } from '../../../../connectors/stream-chat/entities/fields.ts'

/** The general rule, written out again: RFC 3339, its fraction cut to milliseconds, read by Date.parse. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/
function reference(v: string): number | 'refused' {
  if (!RFC3339.test(v)) {
    return 'refused'
  }
  const ms = Date.parse(v.replace(/\.(\d{1,3})\d*/, '.$1'))
  return Number.isFinite(ms) ? ms : 'refused'
}
function read(v: string): number | 'refused' {
  try {
    return timeMs('created_at', v) as number
  } catch {
    return 'refused'
  }
}

const GOOD = [
  '2021-02-17T08:17:49.745857Z',
  '2021-02-17T08:17:49Z',
  '2021-02-17T08:17:49.7Z',
  '2021-02-17T08:17:49.745857123Z',
  '1999-12-31T23:59:59.999Z',
  '2024-02-30T00:00:00Z',
  '2021-02-17T08:17:49.745+02:00',
  '0099-01-01T00:00:00Z',
]

describe('timeMs', () => {
  it.each(GOOD)('reads %s as Date.parse does', (v) => {
    expect(read(v)).toBe(reference(v))
    expect(read(v)).not.toBe('refused')
  })

  it('answers as the general rule for every string one unit away from a good one', () => {
    const differ: string[] = []
    for (const good of GOOD) {
      for (let i = 0; i <= good.length; i++) {
        for (const c of ['', 'x', '/', ':', '-', '.', 'Z', 'T', ' ', '٣', '0', '9']) {
          for (const v of [good.slice(0, i) + c + good.slice(i + 1), good.slice(0, i) + c + good.slice(i)]) {
            if (read(v) !== reference(v)) {
              differ.push(v)
            }
          }
        }
      }
    }
    expect(differ).toEqual([])
  })

  it('refuses what is no time, naming the field', () => {
    expect(() => timeMs('created_at', 'yesterday')).toThrow(/created_at/)
    expect(() => timeMs('created_at', 12)).toThrow(/created_at/)
    expect(timeMs('created_at', null)).toBeUndefined()
  })
})
