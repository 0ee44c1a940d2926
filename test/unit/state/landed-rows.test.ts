import { describe, expect, it } from 'vitest'

import type { Claim } from '../../../src/load/claim.ts'
import { isolateRows } from '../../../src/load/isolate-rows.ts'
import { LandedRows, landedVerdict, mergeWindows, readBackWindows, type RowShape, rowShapes } from '../../../src/load/landed-rows.ts'
import { isBadRowAnswer } from '../../../src/load/read-back.ts'
import type { BatchItem } from '../../../src/state/batch-ledger.ts'
import { PlatformError } from '../../../src/target/errors.ts'
import type { MessageShape } from '../../../src/target/message-match.ts'

const row = (key: string, sentAt: number, extra: Partial<MessageShape> = {}): RowShape => ({
  key,
  shape: { sender: 'u1', receiverType: 'user', receiver: 'u2', sentAt, data: { text: `text of ${key}` }, ...extra },
})
const withLegacy = (key: string, sentAt: number, id: string): RowShape =>
  row(key, sentAt, { data: { text: 'same text', metadata: { legacy: { id } } } })
/** A listed message as the platform shows it: the row's fields plus what the list adds. */
const listed = (r: RowShape, extra: Record<string, unknown> = {}): MessageShape => ({
  ...r.shape,
  data: { ...r.shape.data, entities: { sender: {} } },
  ...extra,
})

describe('rowShapes', () => {
  const item = (key: string, payload: unknown): BatchItem => ({ id: 1, key, payload: JSON.stringify(payload), hash: null })
  it('reads sender, receiver, sentAt and data from the stored payload', () => {
    const p = { muid: 'm1', sender: 'u1', receiverType: 'group', receiver: 'g1', sentAt: 100, data: { text: 'hi' } }
    expect(rowShapes([item('m1', p)])).toEqual([
      { key: 'm1', shape: { sender: 'u1', receiverType: 'group', receiver: 'g1', sentAt: 100, data: { text: 'hi' } } },
    ])
  })
  it.each([
    ['not JSON', { id: 1, key: 'm1', payload: '{', hash: null }],
    ['no sentAt', item('m1', { sender: 'u1', receiverType: 'user', receiver: 'u2' })],
    ['a sentAt that is not a number', item('m1', { sender: 'u1', receiverType: 'user', receiver: 'u2', sentAt: '100' })],
  ])('cannot read a row with %s: undefined (the read-back does not decide)', (_, bad) => {
    expect(rowShapes([item('m0', { sender: 'u1', receiverType: 'user', receiver: 'u2', sentAt: 1 }), bad as BatchItem])).toBeUndefined()
  })
})

describe('readBackWindows and mergeWindows', () => {
  it.each<[string, number[], number, [number, number, string[]][]]>([
    ['one narrow run', [10, 12, 11], 600, [[10, 12, ['r0', 'r2', 'r1']]]],
    [
      'a row far from the others gets its own range',
      [1000, 1001, 5],
      600,
      [
        [5, 5, ['r2']],
        [1000, 1001, ['r0', 'r1']],
      ],
    ],
    ['neighbours exactly the gap apart stay together', [0, 600, 1200], 600, [[0, 1200, ['r0', 'r1', 'r2']]]],
    [
      'one more second splits',
      [0, 601],
      600,
      [
        [0, 0, ['r0']],
        [601, 601, ['r1']],
      ],
    ],
  ])('%s', (_, sentAts, gap, want) => {
    const rows = sentAts.map((s, i) => row(`r${i}`, s))
    expect(readBackWindows(rows, gap).map((w) => [w.from, w.to, w.keys])).toEqual(want)
  })

  it('merges the nearest neighbours until at most max ranges are left', () => {
    const rows = [0, 10_000, 10_700, 50_000, 50_650].map((s, i) => row(`r${i}`, s))
    const windows = readBackWindows(rows, 600)
    expect(windows).toHaveLength(5)
    expect(mergeWindows(windows, 3).map((w) => [w.from, w.to, w.keys])).toEqual([
      [0, 0, ['r0']],
      [10_000, 10_700, ['r1', 'r2']],
      [50_000, 50_650, ['r3', 'r4']],
    ])
    expect(mergeWindows(windows, 1).map((w) => [w.from, w.to])).toEqual([[0, 50_650]])
    expect(mergeWindows(windows, 8)).toEqual(windows)
  })
})

describe('LandedRows: which rows a list shows', () => {
  it('matches by legacy id when the rows carry one, by fingerprint otherwise; ignores messages of other batches', () => {
    const a = withLegacy('a', 100, 'L1')
    const b = withLegacy('b', 100, 'L2')
    const c = row('c', 101)
    const landed = new LandedRows([a, b, c], 'legacy')
    landed.see(listed(b))
    landed.see(listed(c))
    landed.see(listed(row('other', 101)))
    landed.see(listed(withLegacy('x', 100, 'L9')))
    expect(['a', 'b', 'c'].filter((k) => landed.has(k))).toEqual(['b', 'c'])
    expect(landed.size).toBe(2)
  })

  it('a listed copy with another legacy id never takes a row by its fingerprint', () => {
    const a = withLegacy('a', 100, 'L1')
    const landed = new LandedRows([a], 'legacy')
    landed.see(listed(withLegacy('a2', 100, 'L2')))
    expect(landed.has('a')).toBe(false)
  })

  it('two identical rows need two listed messages', () => {
    const r1 = row('r1', 100, { data: { text: 'same' } })
    const r2 = row('r2', 100, { data: { text: 'same' } })
    const landed = new LandedRows([r1, r2], 'legacy')
    landed.see(listed(r1))
    expect(landed.size).toBe(1)
    landed.see(listed(r2))
    expect(landed.size).toBe(2)
  })

  it('uses the configured metadata key', () => {
    const r = row('r', 100, { data: { text: 't', metadata: { src: { id: '7' } } } })
    const landed = new LandedRows([r], 'src')
    landed.see(listed(row('x', 100, { data: { text: 't', metadata: { src: { id: '8' } } } })))
    expect(landed.has('r')).toBe(false)
    landed.see(listed(r))
    expect(landed.has('r')).toBe(true)
  })
})

describe('landedVerdict', () => {
  it.each<[number, number, string]>([
    [50, 0, 'none'],
    [50, 49, 'some'],
    [50, 1, 'some'],
    [50, 50, 'all'],
    [2, 2, 'all'],
  ])('%d rows, %d landed: %s', (rows, n, want) => {
    expect(landedVerdict(rows, n)).toBe(want)
  })
})

describe('isolateRows: a row not found is never rejected; it goes again, arranged to isolate the bad row', () => {
  const rows = Array.from({ length: 6 }, (_, i) => row(`r${i}`, i + 1))
  const found = (...idx: number[]) => {
    const l = new LandedRows(rows, 'legacy')
    for (const i of idx) {
      l.see(listed(rows[i] as RowShape, { id: `p${i}` }))
    }
    return l
  }
  it('a row found is done with its listed message (the platform id comes from it)', () => {
    const iso = isolateRows(rows, found(0, 1, 2, 3, 4, 5))
    expect(iso.alone).toEqual([])
    expect(iso.again).toEqual([])
    expect(iso.landed.get('r2')).toEqual({ ok: true, data: listed(rows[2] as RowShape, { id: 'p2' }) })
  })
  it('a prefix landed (a stop at a bad row, a cut-short commit): the first row not found alone, the rest planned again', () => {
    const iso = isolateRows(rows, found(0, 1))
    expect([...iso.landed.keys()]).toEqual(['r0', 'r1'])
    expect(iso.alone).toEqual(['r2'])
    expect(iso.again).toEqual(['r3', 'r4', 'r5'])
  })
  it('nothing landed: the first row alone, the rest planned again', () => {
    const iso = isolateRows(rows, found())
    expect(iso.alone).toEqual(['r0'])
    expect(iso.again).toEqual(['r1', 'r2', 'r3', 'r4', 'r5'])
  })
  it('rows skipped in the middle (a platform that writes every good row): each row not found alone', () => {
    const iso = isolateRows(rows, found(0, 2, 3, 5))
    expect(iso.alone).toEqual(['r1', 'r4'])
    expect(iso.again).toEqual([])
  })
  it('a hole and a tail (a bad row skipped, then the write cut short): the hole alone, the first of the tail alone, the rest again', () => {
    const iso = isolateRows(rows, found(0, 2))
    expect(iso.alone).toEqual(['r1', 'r3'])
    expect(iso.again).toEqual(['r4', 'r5'])
  })
  it('more holes than are likely bad rows (a partial write of a good request): the first alone, the others together', () => {
    const iso = isolateRows(rows, found(0, 5))
    expect(iso).toMatchObject({ alone: ['r1'], together: ['r2', 'r3', 'r4'], again: [] })
  })
  it('the request order decides, not sentAt: the last row missing is a suffix', () => {
    const reversed = [...rows].reverse()
    const l = new LandedRows(reversed, 'legacy')
    for (const r of reversed.slice(0, 5)) {
      l.see(listed(r))
    }
    expect(isolateRows(reversed, l)).toMatchObject({ alone: ['r0'], together: [], again: [] })
  })
})

describe('isBadRowAnswer', () => {
  const claim = (entity: Claim['entity'], n: number) => ({ entity, items: Array.from({ length: n }, () => ({})) }) as unknown as Claim
  const err = (status: number, code: string, kind: 'http' | 'timeout' = 'http') =>
    new PlatformError({ operation: 'data_import.messages', kind, status, code, message: code })
  it.each<[string, Claim, unknown, boolean]>([
    ['a 500 ERR_EXCEPTION to a message request of several rows', claim('messages', 2), err(500, 'ERR_EXCEPTION'), true],
    ['a single row (the split path decides)', claim('messages', 1), err(500, 'ERR_EXCEPTION'), false],
    ['another endpoint', claim('users', 50), err(500, 'ERR_EXCEPTION'), false],
    ['another 500 code', claim('messages', 50), err(500, 'ERR_INTERNAL'), false],
    ['a 503', claim('messages', 50), err(503, 'ERR_EXCEPTION'), false],
    ['not a platform error', claim('messages', 50), new Error('x'), false],
  ])('%s: %s', (_, c, e, want) => {
    expect(isBadRowAnswer(c, e)).toBe(want)
  })
})
