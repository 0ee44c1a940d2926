/**
 * Characters the platform and Postgres cannot store (U+0000, unpaired surrogates): the detector,
 * `policies.text.invalidCharacters` through the mappings, the import schemas, the connectors' id
 * decoding and the ledger's storable forms.
 */
import { describe, expect, it } from 'vitest'

import { decodeId, decodeOptionalId, FieldProblem, printableId } from '../../../connectors/sql/decode.ts'
import { createMappingContext } from '../../../mappings/context.ts'
import { mapGroup, mapMember, mapMessage, mapUser } from '../../../mappings/index.ts'
import type { PoliciesInput } from '../../../mappings/policies.ts'
import type { MapResult } from '../../../mappings/types.ts'
import type { LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/index.ts'
import { cursorJson, cursorValue, storableJson, storableKey, storableText } from '../../../src/state/safe-text.ts'
import { hasUnstorable, printable, stripUnstorable, unstorableReason } from '../../../src/target/characters.ts'
import { GroupImport, MessageImport, UserImport } from '../../../src/target/schemas.ts'

const EMOJI = '\u{1F600}' // 😀, a valid surrogate pair
const HIGH = '\uD83D'
const LOW = '\uDE00'

describe('the detector', () => {
  const cases: { name: string; text: string; reason: string | undefined; stripped: string; removed: number; shown: string }[] = [
    { name: 'plain text', text: 'hello', reason: undefined, stripped: 'hello', removed: 0, shown: 'hello' },
    { name: 'an emoji (astral, a valid pair)', text: `hi ${EMOJI}!`, reason: undefined, stripped: `hi ${EMOJI}!`, removed: 0, shown: `hi ${EMOJI}!` },
    {
      name: 'other control characters',
      text: 'a\tb\u0001c\uFFFF',
      reason: undefined,
      stripped: 'a\tb\u0001c\uFFFF',
      removed: 0,
      shown: 'a\tb\u0001c\uFFFF',
    },
    { name: 'U+0000', text: 'ab\u0000c', reason: 'contains U+0000 at position 2', stripped: 'abc', removed: 1, shown: 'ab\\u0000c' },
    {
      name: 'several U+0000',
      text: '\u0000x\u0000\u0000',
      reason: 'contains U+0000 at position 0',
      stripped: 'x',
      removed: 3,
      shown: '\\u0000x\\u0000\\u0000',
    },
    {
      name: 'a lone high surrogate',
      text: `x${HIGH}y`,
      reason: 'contains an unpaired surrogate U+D83D at position 1',
      stripped: 'xy',
      removed: 1,
      shown: 'x\\ud83dy',
    },
    {
      name: 'a lone high surrogate at the end',
      text: `x${HIGH}`,
      reason: 'contains an unpaired surrogate U+D83D at position 1',
      stripped: 'x',
      removed: 1,
      shown: 'x\\ud83d',
    },
    {
      name: 'a lone low surrogate',
      text: `${LOW}z`,
      reason: 'contains an unpaired surrogate U+DE00 at position 0',
      stripped: 'z',
      removed: 1,
      shown: '\\ude00z',
    },
    {
      name: 'reversed pair (low then high)',
      text: `${LOW}${HIGH}`,
      reason: 'contains an unpaired surrogate U+DE00 at position 0',
      stripped: '',
      removed: 2,
      shown: '\\ude00\\ud83d',
    },
    {
      name: 'emoji next to a NUL',
      text: `${EMOJI}\u0000${EMOJI}`,
      reason: 'contains U+0000 at position 2',
      stripped: `${EMOJI}${EMOJI}`,
      removed: 1,
      shown: `${EMOJI}\\u0000${EMOJI}`,
    },
  ]
  it.each(cases)('$name', ({ text, reason, stripped, removed, shown }) => {
    expect(hasUnstorable(text)).toBe(reason !== undefined)
    expect(unstorableReason(text)).toBe(reason)
    expect(stripUnstorable(text)).toEqual({ text: stripped, removed })
    expect(printable(text)).toBe(shown)
    expect(hasUnstorable(stripped)).toBe(false)
  })
})

const NOW = Date.UTC(2025, 5, 1)
const SENT = NOW - 60_000
const USER: LegacyUser = { id: 'u1', name: 'Ann', isBot: false }
const MESSAGE: LegacyMessage = { id: 'm1', senderId: 'u1', receiverType: 'group', receiverId: 'g1', type: 'text', text: 'hello', sentAt: SENT }

function ctx(mode: 'strip' | 'quarantine' | undefined) {
  const policies: PoliciesInput = mode === undefined ? {} : { text: { invalidCharacters: mode } }
  return createMappingContext({
    now: NOW,
    policies,
    users: { u1: { uid: 'u1', name: 'Ann', username: 'ann' }, u2: { uid: 'u2', name: 'Bob' } },
    groups: { g1: { guid: 'g1', name: 'General', type: 'public' } },
  })
}

function textOutcomes(r: MapResult): string[] {
  return r.kind === 'rejected' ? [] : r.outcomes.filter((o) => o.policy === 'text').map((o) => o.outcome)
}

describe('policies.text.invalidCharacters', () => {
  it('defaults to strip', () => {
    expect(ctx(undefined).policies.text.invalidCharacters).toBe('strip')
  })

  const cases: {
    name: string
    map: (mode: 'strip' | 'quarantine') => MapResult
    /** Under strip: what the item holds at `path`, and the outcomes counted. */
    strip: { path: (p: any) => unknown; value: unknown; outcomes: string[] }
    /** Under quarantine: the rejected field and reason. */
    quarantine: { field: string; reason: string }
  }[] = [
    {
      name: 'NUL in a user name',
      map: (m) => mapUser({ ...USER, name: 'An\u0000n' }, ctx(m)),
      strip: { path: (p) => p.name, value: 'Ann', outcomes: ['stripped:name'] },
      quarantine: { field: 'name', reason: 'contains U+0000 at position 2' },
    },
    {
      name: 'NUL in an avatar URL',
      map: (m) => mapUser({ ...USER, avatar: 'https://x.example/a\u0000.png' }, ctx(m)),
      strip: { path: (p) => p.avatar, value: 'https://x.example/a.png', outcomes: ['stripped:avatar'] },
      quarantine: { field: 'avatar', reason: 'contains U+0000 at position 19' },
    },
    {
      name: 'NUL in a nested metadata value',
      map: (m) => mapUser({ ...USER, metadata: { a: { b: ['ok', 'x\u0000'] } } }, ctx(m)),
      strip: { path: (p) => p.metadata.a.b, value: ['ok', 'x'], outcomes: ['stripped:metadata'] },
      quarantine: { field: 'metadata.a.b.1', reason: 'contains U+0000 at position 1' },
    },
    {
      name: 'NUL in a nested metadata key',
      map: (m) => mapUser({ ...USER, metadata: { a: { 'k\u0000ey': 1 } } }, ctx(m)),
      strip: { path: (p) => p.metadata.a, value: { key: 1 }, outcomes: ['stripped:metadata'] },
      quarantine: { field: 'metadata.a.k\\u0000ey', reason: 'key contains U+0000 at position 1' },
    },
    {
      name: 'NUL in a group description',
      map: (m) => mapGroup({ id: 'g1', name: 'G', type: 'public', description: 'about\u0000' } as LegacyGroup, ctx(m)),
      strip: { path: (p) => p.metadata.description, value: 'about', outcomes: ['stripped:description'] },
      quarantine: { field: 'description', reason: 'contains U+0000 at position 5' },
    },
    {
      name: 'NUL in message text',
      map: (m) => mapMessage({ ...MESSAGE, text: 'hel\u0000lo' }, ctx(m)),
      strip: { path: (p) => p.data.text, value: 'hello', outcomes: ['stripped:text'] },
      quarantine: { field: 'text', reason: 'contains U+0000 at position 3' },
    },
    {
      name: 'a lone high surrogate in message text',
      map: (m) => mapMessage({ ...MESSAGE, text: `hi ${HIGH}` }, ctx(m)),
      strip: { path: (p) => p.data.text, value: 'hi ', outcomes: ['stripped:text'] },
      quarantine: { field: 'text', reason: 'contains an unpaired surrogate U+D83D at position 3' },
    },
    {
      name: 'a lone low surrogate in custom data',
      map: (m) => mapMessage({ ...MESSAGE, type: 'custom', customData: { v: `${LOW}ok` } }, ctx(m)),
      strip: { path: (p) => p.data.customData, value: { v: 'ok' }, outcomes: ['stripped:customData'] },
      quarantine: { field: 'customData.v', reason: 'contains an unpaired surrogate U+DE00 at position 0' },
    },
    {
      name: 'NUL in text and metadata: counted once per field',
      map: (m) => mapMessage({ ...MESSAGE, text: '\u0000hello\u0000', metadata: { x: '\u0000' } }, ctx(m)),
      strip: { path: (p) => [p.data.text, p.data.metadata.x], value: ['hello', ''], outcomes: ['stripped:text', 'stripped:metadata'] },
      quarantine: { field: 'text', reason: 'contains U+0000 at position 0' },
    },
  ]
  it.each(cases)('strip: $name', ({ map, strip }) => {
    const r = map('strip')
    expect(r.kind, JSON.stringify(r)).toBe('items')
    if (r.kind !== 'items') {
      return
    }
    expect(strip.path(r.items[0]?.payload)).toEqual(strip.value)
    expect(textOutcomes(r)).toEqual(strip.outcomes)
    expect(hasUnstorable(JSON.stringify(r.items[0]?.payload).replaceAll('\\u0000', '\u0000'))).toBe(false)
  })
  it.each(cases)('quarantine: $name', ({ map, quarantine }) => {
    expect(map('quarantine')).toEqual({ kind: 'rejected', field: quarantine.field, reason: quarantine.reason, policy: 'text' })
  })

  it('valid emoji pass untouched, with nothing counted', () => {
    const record = { ...MESSAGE, text: `${EMOJI} party ${EMOJI}`, metadata: { [EMOJI]: EMOJI } }
    for (const mode of ['strip', 'quarantine'] as const) {
      const r = mapMessage(record, ctx(mode))
      expect(r.kind).toBe('items')
      if (r.kind !== 'items') {
        continue
      }
      expect(r.items[0]?.payload.data?.text).toBe(`${EMOJI} party ${EMOJI}`)
      expect(r.items[0]?.payload.data?.metadata?.[EMOJI]).toBe(EMOJI)
      expect(textOutcomes(r)).toEqual([])
    }
  })

  it('a stripped key that would replace another key is rejected, not merged', () => {
    const r = mapUser({ ...USER, metadata: { a: 1, 'a\u0000': 2 } }, ctx('strip'))
    expect(r).toMatchObject({ kind: 'rejected', field: 'metadata.a\\u0000', policy: 'text' })
  })

  const idCases: { name: string; map: (mode: 'strip' | 'quarantine') => MapResult; field: string }[] = [
    { name: 'user id', map: (m) => mapUser({ ...USER, id: 'u\u00001' }, ctx(m)), field: 'id' },
    {
      name: 'group owner id',
      map: (m) => mapGroup({ id: 'g1', name: 'G', type: 'public', ownerId: `u${HIGH}` } as LegacyGroup, ctx(m)),
      field: 'ownerId',
    },
    {
      name: 'member user id',
      map: (m) => mapMember({ groupId: 'g1', userId: 'u1\u0000', scope: 'participant', banned: false } as LegacyMember, ctx(m)),
      field: 'userId',
    },
    { name: 'message sender id', map: (m) => mapMessage({ ...MESSAGE, senderId: 'u1\u0000' }, ctx(m)), field: 'senderId' },
    { name: 'thread parent id', map: (m) => mapMessage({ ...MESSAGE, threadParentId: '\u0000p' }, ctx(m)), field: 'threadParentId' },
    { name: 'a mentioned id', map: (m) => mapMessage({ ...MESSAGE, mentions: ['u2', 'u\u0000'] }, ctx(m)), field: 'mentions.1' },
    {
      name: 'a reactor id',
      map: (m) => mapMessage({ ...MESSAGE, reactions: [{ emoji: 'x', userId: 'u\u0000' }] }, ctx(m)),
      field: 'reactions.0.userId',
    },
  ]
  it.each(idCases)('a legacy id is never stripped: $name is rejected under both policies', ({ map, field }) => {
    for (const mode of ['strip', 'quarantine'] as const) {
      const r = map(mode)
      expect(r.kind).toBe('rejected')
      if (r.kind !== 'rejected') {
        continue
      }
      expect(r.field).toBe(field)
      expect(r.reason).toMatch(/^legacy id contains (U\+0000|an unpaired surrogate U\+D83D) at position \d+ \(an id is never changed\)$/)
      expect(hasUnstorable(r.reason + r.field)).toBe(false)
    }
  })
})

describe('the import schemas refuse what cannot be stored', () => {
  const cases: { name: string; parse: () => { success: boolean; error?: { issues: { path: PropertyKey[] }[] } }; path: string }[] = [
    { name: 'user name', parse: () => UserImport.safeParse({ uid: 'u1', name: 'a\u0000' }), path: 'name' },
    { name: 'user avatar', parse: () => UserImport.safeParse({ uid: 'u1', name: 'a', avatar: `https://x/${LOW}` }), path: 'avatar' },
    { name: 'a tag', parse: () => UserImport.safeParse({ uid: 'u1', name: 'a', tags: ['ok', '\u0000'] }), path: 'tags.1' },
    {
      name: 'nested metadata key',
      parse: () => GroupImport.safeParse({ guid: 'g', name: 'G', type: 'public', metadata: { a: { '\u0000': 1 } } }),
      path: 'metadata',
    },
    {
      name: 'message text',
      parse: () => MessageImport.safeParse({ muid: 'm', sender: 'u', receiverType: 'user', receiver: 'v', sentAt: 1, data: { text: `x${HIGH}` } }),
      path: 'data.text',
    },
    {
      name: 'custom data value',
      parse: () =>
        MessageImport.safeParse({
          muid: 'm',
          sender: 'u',
          receiverType: 'user',
          receiver: 'v',
          category: 'custom',
          type: 'x',
          sentAt: 1,
          data: { customData: { a: ['\u0000'] } },
        }),
      path: 'data.customData',
    },
  ]
  it.each(cases)('$name', ({ parse, path }) => {
    const r = parse()
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.map(String).join('.'))).toContain(path)
  })

  it('emoji pass', () => {
    expect(UserImport.safeParse({ uid: 'u1', name: EMOJI, metadata: { [EMOJI]: [EMOJI] }, tags: [EMOJI] }).success).toBe(true)
  })
})

describe('connectors: ids', () => {
  it('an id with U+0000 is a field problem naming the position', () => {
    expect(() => decodeId('id', 'ab\u0000')).toThrow(new FieldProblem('id', 'legacy id contains U+0000 at position 2'))
    expect(() => decodeOptionalId('parent_id', '\u0000')).toThrow(/parent_id|U\+0000 at position 0/)
    expect(decodeOptionalId('parent_id', '')).toBeUndefined()
    expect(decodeId('id', 42)).toBe('42')
  })
  it.each([
    ['ab\u0000', 'ab\\u0000'],
    [`x${HIGH}`, 'x\\ud83d'],
    [EMOJI, EMOJI],
    [null, '?'],
    [7, '7'],
    [new Uint8Array([0x61, 0xff]), 'a\uFFFD'],
  ])('printableId(%j) = %j', (value, shown) => {
    expect(printableId(value)).toBe(shown)
  })
})

describe('the ledger: storable forms', () => {
  it('text and keys', () => {
    expect(storableText('a\u0000b')).toBe('a\\u0000b')
    expect(storableText(EMOJI)).toBe(EMOJI)
    expect(storableKey('plain')).toBe('plain')
    // Two keys that print the same stay two keys.
    expect(storableKey('a\u0000')).not.toBe(storableKey('a\\u0000'))
    expect(storableKey('a\u0000')).toMatch(/^a\\u0000~[\w-]{10}$/)
  })
  it.each([
    [{ a: 'x\u0000' }, '{"a":"x\\ufffd"}'],
    [{ a: `${HIGH}` }, '{"a":"\\ufffd"}'],
    // A literal backslash before "u0000" keeps its escape: still valid JSON.
    [{ a: '\\u0000' }, '{"a":"\\\\ufffd"}'],
    [{ a: EMOJI }, `{"a":"${EMOJI}"}`],
  ])('storableJson(%j)', (value, json) => {
    expect(storableJson(value)).toBe(json)
    expect(() => JSON.parse(json)).not.toThrow()
  })
  it.each([{ id: 'a\u0000b', n: 1 }, { id: `x${LOW}` }, { id: 'plain' }, 5, null])('cursorJson round-trips %j', (cursor) => {
    const stored = cursorJson(cursor)
    expect(stored).not.toMatch(/\\u(0000|d[89a-f])/i)
    expect(cursorValue(JSON.parse(stored))).toEqual(cursor)
  })
})
