/** verify's message matching without muid: legacy id (and part) in data.metadata, else fingerprint. */
import { describe, expect, it } from 'vitest'

import { fingerprintOf, legacyIdOf, legacyKeyOf, MessageIndex, type MessageShape } from '../../../src/target/message-match.ts'

const base = { sender: 'alice', receiverType: 'user', receiver: 'bob', sentAt: 1_700_000_000 }
const msg = (text: string, legacy?: Record<string, unknown>, key = 'legacy'): MessageShape => ({
  ...base,
  data: { text, ...(legacy === undefined ? {} : { metadata: { [key]: legacy, other: 1 } }) },
})

describe('legacyKeyOf / fingerprintOf', () => {
  it('reads the legacy id and part number under the configured key only', () => {
    expect(legacyIdOf(msg('x', { id: 'L1' }), 'legacy')).toBe('L1')
    expect(legacyKeyOf(msg('x', { id: 'L1' }), 'legacy')).toBe(legacyKeyOf(msg('other text', { id: 'L1', editedAt: 5 }), 'legacy'))
    expect(legacyKeyOf(msg('x', { id: 'L1', part: { n: 2, of: 3, first: 'l1' } }), 'legacy')).not.toBe(legacyKeyOf(msg('x', { id: 'L1' }), 'legacy'))
    expect(legacyKeyOf(msg('x', { id: 'L1', part: { n: 1, of: 3, first: 'l1' } }), 'legacy')).toBe(legacyKeyOf(msg('x', { id: 'L1' }), 'legacy'))
    expect(legacyKeyOf(msg('x', { id: 'L1' }, 'cf'), 'legacy')).toBeUndefined()
    expect(legacyKeyOf(msg('x', { id: 'L1' }, 'cf'), 'cf')).toBeDefined()
    expect(legacyKeyOf(msg('x', { editedAt: 5 }), 'legacy')).toBeUndefined()
    expect(legacyKeyOf({ ...base, data: { metadata: { legacy: 'L1' } } }, 'legacy')).toBeUndefined()
  })

  it('a fingerprint changes with each of sender, receiverType, receiver, sentAt and text, not with metadata', () => {
    const f = fingerprintOf(msg('hi'))
    expect(fingerprintOf(msg('hi', { id: 'L9' }))).toBe(f)
    for (const other of [
      { ...msg('hi'), sender: 'carol' },
      { ...msg('hi'), receiverType: 'group' },
      { ...msg('hi'), receiver: 'eve' },
      { ...msg('hi'), sentAt: 1 },
      msg('hi!'),
    ]) {
      expect(fingerprintOf(other)).not.toBe(f)
    }
    // No text (an attachment-only message) is a fingerprint too, distinct from an empty text.
    expect(fingerprintOf({ ...base })).not.toBe(fingerprintOf(msg('')))
  })
})

describe('MessageIndex', () => {
  it('matches by legacy id whatever the fields, and never by fingerprint a message that carries a legacy id', () => {
    const index = new MessageIndex<string>('legacy')
    index.add('m1', msg('hello', { id: 'L1' }))
    // The text changed on the platform: still m1 (the field comparison reports the text).
    expect(index.take(msg('tampered', { id: 'L1' }))).toEqual({ item: 'm1', by: 'legacyId' })
    const other = new MessageIndex<string>('legacy')
    other.add('m1', msg('hello', { id: 'L1' }))
    // Another legacy id with the same fields is not m1.
    expect(other.take(msg('hello', { id: 'L2' }))).toBeUndefined()
    // Without a legacy id, the same fields are m1.
    expect(other.take(msg('hello'))).toEqual({ item: 'm1', by: 'fingerprint' })
  })

  it('hands each item out once: a second copy matches only taken items and is told apart', () => {
    const index = new MessageIndex<string>('legacy')
    index.add('a', msg('ok'))
    index.add('b', msg('ok'))
    expect(index.take(msg('ok'))?.item).toBe('a')
    expect(index.take(msg('ok'))?.item).toBe('b')
    expect(index.take(msg('ok'))).toBeUndefined()
    expect(index.takenMatch(msg('ok'))).toBe('a')
    expect(index.takenMatch(msg('unknown'))).toBeUndefined()
    expect(index.items().map((i) => index.isTaken(i))).toEqual([true, true])
  })
})
