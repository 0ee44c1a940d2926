/**
 * The end-to-end oracle's own footing (test/helpers/expected-*.ts): its id rule gives the README's
 * examples, and `compareWithExpected` names each kind of difference — a missing, an unexpected or a
 * duplicated item, a fact that does not hold, a split message whose parts are wrong — so an
 * end-to-end test that compares against it can fail.
 */
import { describe, expect, it } from 'vitest'

import type { ExpectedItems, ItemFacts } from '../../helpers/expected-facts.ts'
import { state } from '../../helpers/expected-facts.ts'
import { alternativeIdOf, platformIdOf } from '../../helpers/expected-ids.ts'
import { compareWithExpected, type SandboxContents } from '../../helpers/run-e2e.ts'

describe('the oracle id rule', () => {
  it('gives the examples of mappings/README.md and connectors/slack-export/README.md', () => {
    expect(platformIdOf('alice_01-x')).toBe('alice_01-x')
    expect(platformIdOf('U1')).toBe('u1_hwa4itaxd')
    expect(platformIdOf('ABC')).toBe('abc_9skeurmja')
    expect(platformIdOf('U061A1R2R')).toBe('u061a1r2r_gf7g8ninm')
    expect(platformIdOf('x'.repeat(101))).toMatch(/^x{90}_[0-9a-z]{9}$/)
    expect(alternativeIdOf('abc_9skeurmja', 1)).toMatch(/^abc_9skeurmja_[0-9a-z]{9}$/)
    expect(alternativeIdOf('abc_9skeurmja', 1)).not.toBe(alternativeIdOf('abc_9skeurmja', 2))
  })
})

const facts = (f: (x: ItemFacts) => void): ItemFacts => {
  const x: ItemFacts = new Map()
  f(x)
  return x
}

function expectation(): ExpectedItems {
  return {
    users: new Map([['alice', facts((x) => state(x, ['name'], { eq: 'Alice' }))]]),
    groups: new Map(),
    members: new Map(),
    messages: new Map([
      [
        'm1',
        facts((x) => {
          state(x, ['sent_at'], { eq: 1_700_000_000 })
          state(x, ['data', 'text'], { startsWith: '> Alice: ', endsWith: 'Reply' })
          state(x, ['data', 'metadata'], { keys: ['legacy'] })
        }),
      ],
      ['long', facts((x) => state(x, ['sender'], { eq: 'alice' }))],
    ]),
    splits: new Map([['long', { text: 'one two three' }]]),
  }
}

const part = (key: string, n: number, of: number, text: string, sender = 'alice') => ({
  key,
  row: { sender, data: { text, metadata: { legacy: { part: { n, of, first: 'long' } } } } },
})

function platform(): SandboxContents {
  return {
    users: [{ key: 'alice', row: { name: 'Alice' } }],
    groups: [],
    members: [],
    messages: [
      { key: 'm1', row: { sent_at: '1700000000', data: { text: '> Alice: Hi…\n\nReply', metadata: { legacy: { id: 'm1' } } } } },
      part('long', 1, 2, 'one two '),
      part('long-p2', 2, 2, 'three'),
    ],
  }
}

describe('compareWithExpected', () => {
  it('finds nothing when every fact holds (times stored as text, a split message in its parts)', () => {
    expect(compareWithExpected(expectation(), platform())).toEqual([])
  })

  it('names a missing, an unexpected and a duplicated item, and each fact that does not hold', () => {
    const actual = platform()
    actual.users = [{ key: 'bob', row: { name: 'Bob' } }]
    actual.messages[0] = { key: 'm1', row: { sent_at: 1_700_003_600, data: { text: 'Reply', metadata: { legacy: {}, x: 1 } } } }
    actual.messages.push(actual.messages[0] as SandboxContents['messages'][number])
    expect(compareWithExpected(expectation(), actual)).toEqual([
      'users bob: on the platform but not expected',
      'users alice: expected but missing on the platform',
      'messages m1: sent_at is 1700003600, expected 1700000000',
      'messages m1: data.text is "Reply", expected "> Alice: "…"Reply"',
      'messages m1: data.metadata has keys ["legacy","x"], expected ["legacy"]',
      'messages m1: on the platform 2 times',
    ])
  })

  it('names a split message whose parts are not 1…N, are numbered wrong, or lose text', () => {
    const actual = platform()
    actual.messages[2] = part('long-p3', 2, 2, 'thr')
    expect(compareWithExpected(expectation(), actual)).toEqual([
      'messages long: split into parts [1,3], expected 1…N with 2 ≤ N ≤ 20',
      'messages long part 3: metadata.legacy.part is {"n":2,"of":2,"first":"long"}, expected {"n":3,"of":2,"first":"long"}',
      "messages long: the parts' texts together are not the message's (11 characters, expected 13)",
    ])
    actual.messages.splice(2, 1)
    expect(compareWithExpected(expectation(), actual)[0]).toBe('messages long: split into parts [1], expected 1…N with 2 ≤ N ≤ 20')
    expect(compareWithExpected(expectation(), actual)).toContain(
      'messages long part 1: metadata.legacy.part is {"n":1,"of":2,"first":"long"}, expected {"n":1,"of":1,"first":"long"}',
    )
  })
})
