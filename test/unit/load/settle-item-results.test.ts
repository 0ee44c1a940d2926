import { describe, expect, it } from 'vitest'

import { ALREADY_PRESENT_CODES, platformIdOf, settleItemResults, type SettlementTally } from '../../../src/load/settle-item-results.ts'
import { deadHolderBatches } from '../../../src/load/take-over-dead-leases.ts'
import type { ItemSettlement } from '../../../src/state/batch-ledger.ts'
import type { ItemResult } from '../../../src/target/client.ts'

const item = (id: number) => ({ id, key: `k${id}`, payload: '{}', hash: `h${id}` })
const ok: ItemResult = { ok: true }
const fail = (code: string, message = `${code} message`): ItemResult => ({ ok: false, code, message })

describe('settleItemResults: one item', () => {
  it.each<[string, ItemResult | undefined, Omit<ItemSettlement, 'id' | 'hash'>]>([
    ['success', ok, { status: 'done', doneReason: 'created', code: null, message: null }],
    ['success with data', { ok: true, data: { uid: 'k1' } }, { status: 'done', doneReason: 'created', code: null, message: null }],
    [
      'ERR_UID_ALREADY_EXISTS',
      fail('ERR_UID_ALREADY_EXISTS'),
      { status: 'done', doneReason: 'already_present', code: 'ERR_UID_ALREADY_EXISTS', message: 'ERR_UID_ALREADY_EXISTS message' },
    ],
    [
      'ERR_GUID_ALREADY_EXISTS',
      fail('ERR_GUID_ALREADY_EXISTS'),
      { status: 'done', doneReason: 'already_present', code: 'ERR_GUID_ALREADY_EXISTS', message: 'ERR_GUID_ALREADY_EXISTS message' },
    ],
    [
      'ERR_ALREADY_JOINED',
      fail('ERR_ALREADY_JOINED'),
      { status: 'done', doneReason: 'already_present', code: 'ERR_ALREADY_JOINED', message: 'ERR_ALREADY_JOINED message' },
    ],
    [
      'ERR_IMPORT_MUID_ALREADY_EXISTS',
      fail('ERR_IMPORT_MUID_ALREADY_EXISTS'),
      { status: 'done', doneReason: 'already_present', code: 'ERR_IMPORT_MUID_ALREADY_EXISTS', message: 'ERR_IMPORT_MUID_ALREADY_EXISTS message' },
    ],
    [
      'another code: rejected with its reason',
      fail('ERR_BAD_REQUEST', 'name too long'),
      { status: 'rejected', doneReason: null, code: 'ERR_BAD_REQUEST', message: 'name too long' },
    ],
    [
      'a near miss of an already-present code is rejected',
      fail('ERR_UID_ALREADY_EXIST'),
      { status: 'rejected', doneReason: null, code: 'ERR_UID_ALREADY_EXIST', message: 'ERR_UID_ALREADY_EXIST message' },
    ],
    ['not in the answer: planned again', undefined, { status: 'planned', doneReason: null, code: null, message: null }],
  ])('%s', (_name, result, expected) => {
    const results = new Map<string, ItemResult>(result === undefined ? [] : [['k1', result]])
    const { items } = settleItemResults([item(1)], results)
    expect(items).toEqual([{ id: 1, hash: 'h1', ...expected }])
  })
})

describe('settleItemResults: tallies of a batch', () => {
  it.each<[string, (ItemResult | undefined)[], SettlementTally]>([
    ['all created', [ok, ok, ok], { done: 3, rejected: 0, requeued: 0 }],
    [
      'created and already present both count as done',
      [ok, fail('ERR_UID_ALREADY_EXISTS'), fail('ERR_ALREADY_JOINED')],
      { done: 3, rejected: 0, requeued: 0 },
    ],
    ['one of each', [ok, fail('ERR_VALIDATION'), undefined], { done: 1, rejected: 1, requeued: 1 }],
    ['an empty answer requeues everything', [undefined, undefined], { done: 0, rejected: 0, requeued: 2 }],
    ['all rejected', [fail('ERR_A'), fail('ERR_B')], { done: 0, rejected: 2, requeued: 0 }],
    ['no items', [], { done: 0, rejected: 0, requeued: 0 }],
  ])('%s', (_name, answers, expected) => {
    const items = answers.map((_, i) => item(i + 1))
    const results = new Map<string, ItemResult>()
    answers.forEach((a, i) => a !== undefined && results.set(`k${i + 1}`, a))
    const settled = settleItemResults(items, results)
    expect(settled.tally).toEqual(expected)
    expect(settled.items.map((s) => s.id)).toEqual(items.map((i) => i.id))
  })

  it('answers for keys the batch did not hold change nothing', () => {
    const results = new Map<string, ItemResult>([
      ['k1', ok],
      ['other', fail('ERR_X')],
    ])
    expect(settleItemResults([item(1)], results).tally).toEqual({ done: 1, rejected: 0, requeued: 0 })
  })

  it('the already-present codes are exactly the documented four', () => {
    expect([...ALREADY_PRESENT_CODES].sort()).toEqual([
      'ERR_ALREADY_JOINED',
      'ERR_GUID_ALREADY_EXISTS',
      'ERR_IMPORT_MUID_ALREADY_EXISTS',
      'ERR_UID_ALREADY_EXISTS',
    ])
  })
})

describe('deadHolderBatches', () => {
  const alive = (pid: number) => pid === 200
  it.each<[string, { id: number; leaseOwner: string }[], number[]]>([
    ['a dead process on this host', [{ id: 1, leaseOwner: 'me#boot/300/abcd' }], [1]],
    ['a live process on this host', [{ id: 1, leaseOwner: 'me#boot/200/abcd' }], []],
    ['this process itself', [{ id: 1, leaseOwner: 'me#boot/100/abcd' }], []],
    ['another host, even with a dead-looking pid', [{ id: 1, leaseOwner: 'other#boot/300/abcd' }], []],
    [
      'a mix',
      [
        { id: 1, leaseOwner: 'me#boot/300/a' },
        { id: 2, leaseOwner: 'me#boot/200/b' },
        { id: 3, leaseOwner: 'me#boot/301/c' },
      ],
      [1, 3],
    ],
  ])('%s', (_name, held, expected) => {
    expect(deadHolderBatches(held, 'me#boot', 100, alive)).toEqual(expected)
  })
})

describe('platformIdOf: the platform id of a created item, recorded as items.platform_id', () => {
  it.each<[string, unknown, string | undefined]>([
    ['a message answer: data.id', { id: '1234', muid: 'm1' }, '1234'],
    ['a numeric id', { id: 77, muid: 'm1' }, '77'],
    ['the nested variant: data.data.id', { data: { id: '99', muid: 'm1' } }, '99'],
    ['a user answer has no id', { uid: 'alice', name: 'Alice' }, undefined],
    ['no data', undefined, undefined],
    ['an empty id', { id: '' }, undefined],
    ['a fractional id is no id', { id: 1.5 }, undefined],
  ])('%s', (_name, data, expected) => {
    expect(platformIdOf(data)).toBe(expected)
  })

  it('settles a created message with its platform id; an already-present one has none', () => {
    const results = new Map<string, ItemResult>([
      ['k1', { ok: true, data: { id: '501', muid: 'k1' } }],
      ['k2', fail('ERR_IMPORT_MUID_ALREADY_EXISTS')],
    ])
    const { items } = settleItemResults([item(1), item(2)], results)
    expect(items[0]?.platformId).toBe('501')
    expect(items[1]?.platformId).toBeUndefined()
  })
})
