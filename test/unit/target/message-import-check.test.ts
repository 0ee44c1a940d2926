import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { mapMessage } from '../../../mappings/map-message.ts'
import { isCanonicalMessageImport } from '../../../src/target/message-import-check.ts'
import { LIMITS, MessageImport } from '../../../src/target/schemas.ts'

type Obj = Record<string, unknown>

const GOOD: readonly Obj[] = [
  {
    muid: 'm1',
    sender: 'u1',
    receiverType: 'group',
    receiver: 'g1',
    category: 'message',
    type: 'text',
    data: { text: 'hello' },
    sentAt: 1_700_000_000,
  },
  {
    muid: 'm2',
    sender: 'u1',
    receiverType: 'user',
    receiver: 'u2',
    category: 'message',
    type: 'image',
    data: {
      text: '',
      attachments: [{ url: 'https://x/y.png', name: 'y.png', mimeType: 'image/png', extension: 'png', size: '12' }],
      metadata: { legacy: { id: 'M2', reactions: { '👍': ['u1'] } } },
      extra: { any: ['json', 1, null] },
    },
    sentAt: 0,
    deliveredAt: 1_700_000_001,
    readAt: 9_999_999_999,
    mentionedUserDetails: { u2: { uid: 'u2', name: 'Bob', avatar: 'https://x/b.png' } },
  },
  {
    muid: 'm3',
    sender: 'u1',
    receiverType: 'group',
    receiver: 'g1',
    category: 'custom',
    type: 'poll',
    data: { customData: { q: 'why?' } },
    sentAt: 5,
  },
  { muid: 'm4', sender: 'u1', receiverType: 'group', receiver: 'g1', data: { text: 'no category or type' }, tags: ['a', 'b'], sentAt: 5 },
  { muid: 'm5', sender: 'u1', receiverType: 'group', receiver: 'g1', type: 'text', data: { text: 'x' }, sentAt: 5, deliveredAt: undefined },
  {
    muid: 'm6',
    sender: 'u1',
    receiverType: 'group',
    receiver: 'g1',
    data: { text: 'details' },
    sentAt: 5,
    senderUserDetails: { uid: 'u1', name: 'Ann', role: 'default', createdAt: 1, metadata: {}, tags: ['t'], deactivatedAt: 2 },
  },
]

/** Changes of a good item: each gives an item zod refuses, reorders, or takes. */
const CHANGES: readonly { readonly name: string; readonly change: (m: Obj) => Obj }[] = [
  { name: 'muid missing', change: ({ muid: _, ...m }) => m },
  { name: 'muid uppercase', change: (m) => ({ ...m, muid: 'M1' }) },
  { name: 'muid too long', change: (m) => ({ ...m, muid: 'a'.repeat(LIMITS.ID_MAX + 1) }) },
  { name: 'sender a number', change: (m) => ({ ...m, sender: 5 }) },
  { name: 'receiverType unknown', change: (m) => ({ ...m, receiverType: 'room' }) },
  { name: 'receiver undefined', change: (m) => ({ ...m, receiver: undefined }) },
  { name: 'category unknown', change: (m) => ({ ...m, category: 'action' }) },
  { name: 'type empty', change: (m) => ({ ...m, type: '' }) },
  { name: 'type not a message type', change: (m) => ({ ...m, category: 'message', type: 'poll' }) },
  { name: 'sentAt in ms', change: (m) => ({ ...m, sentAt: 1_700_000_000_000 }) },
  { name: 'sentAt a fraction', change: (m) => ({ ...m, sentAt: 1.5 }) },
  { name: 'sentAt negative', change: (m) => ({ ...m, sentAt: -1 }) },
  { name: 'sentAt a string', change: (m) => ({ ...m, sentAt: '5' }) },
  { name: 'readAt NaN', change: (m) => ({ ...m, readAt: Number.NaN }) },
  { name: 'an unknown key', change: (m) => ({ ...m, parentId: 'p' }) },
  { name: 'an unknown key set to undefined', change: (m) => ({ ...m, parentId: undefined }) },
  { name: 'keys in another order', change: ({ muid, ...m }) => ({ ...m, muid }) },
  { name: 'sentAt before data (the old order)', change: ({ sentAt, data, ...m }) => ({ ...m, sentAt, data }) },
  { name: 'group details (left to zod)', change: (m) => ({ ...m, receiverGroupDetails: { guid: 'g1', name: 'G', type: 'public' } }) },
  { name: 'no data', change: ({ data: _, ...m }) => m },
  { name: 'data null', change: (m) => ({ ...m, data: null }) },
  { name: 'data an array', change: (m) => ({ ...m, data: [] }) },
  { name: 'text blank', change: (m) => ({ ...m, category: 'message', type: 'text', data: { text: '  ' } }) },
  { name: 'text with U+0000', change: (m) => ({ ...m, data: { ...(m.data as Obj), text: 'a\u0000b' } }) },
  { name: 'text with a lone surrogate', change: (m) => ({ ...m, data: { ...(m.data as Obj), text: 'a\ud800' } }) },
  { name: 'text a number', change: (m) => ({ ...m, data: { ...(m.data as Obj), text: 5 } }) },
  { name: 'text over the data limit', change: (m) => ({ ...m, data: { ...(m.data as Obj), text: 'é'.repeat(LIMITS.MESSAGE_DATA_BYTES_MAX) } }) },
  { name: 'text near the data limit (bound over, size under)', change: (m) => ({ ...m, data: { ...(m.data as Obj), text: 'a'.repeat(5000) } }) },
  { name: 'data keys in another order', change: (m) => ({ ...m, data: { metadata: { a: 1 }, ...(m.data as Obj) } }) },
  { name: 'data extra key before known ones', change: (m) => ({ ...m, data: { zz: 1, ...(m.data as Obj) } }) },
  { name: 'data extra key with U+0000 in a string', change: (m) => ({ ...m, data: { ...(m.data as Obj), zz: ['\u0000'] } }) },
  { name: 'data extra key set to undefined', change: (m) => ({ ...m, data: { ...(m.data as Obj), zz: undefined } }) },
  { name: 'metadata an array', change: (m) => ({ ...m, data: { ...(m.data as Obj), metadata: [] } }) },
  { name: 'metadata a Date', change: (m) => ({ ...m, data: { ...(m.data as Obj), metadata: new Date(0) } }) },
  { name: 'metadata key with a lone surrogate', change: (m) => ({ ...m, data: { ...(m.data as Obj), metadata: { '\udc00': 1 } } }) },
  { name: 'customData missing on custom', change: (m) => ({ ...m, category: 'custom', type: 'poll', data: { text: 'x' } }) },
  { name: 'image without attachments', change: (m) => ({ ...m, category: 'message', type: 'image', data: { text: 'x' } }) },
  { name: 'attachments not an array', change: (m) => ({ ...m, data: { ...(m.data as Obj), attachments: {} } }) },
  {
    name: 'attachment without a mimeType',
    change: (m) => ({ ...m, data: { ...(m.data as Obj), attachments: [{ url: 'https://x', name: 'n', extension: 'e' }] } }),
  },
  {
    name: 'attachment size a number',
    change: (m) => ({ ...m, data: { ...(m.data as Obj), attachments: [{ url: 'https://x', name: 'n', mimeType: 'a/b', extension: 'e', size: 5 }] } }),
  },
  {
    name: 'attachment size a fraction string',
    change: (m) => ({
      ...m,
      data: { ...(m.data as Obj), attachments: [{ url: 'https://x', name: 'n', mimeType: 'a/b', extension: 'e', size: '350.2' }] },
    }),
  },
  {
    name: 'attachment with an unknown key',
    change: (m) => ({
      ...m,
      data: { ...(m.data as Obj), attachments: [{ url: 'https://x', name: 'n', mimeType: 'a/b', extension: 'e', thumb: 'x' }] },
    }),
  },
  {
    name: 'attachment keys in another order',
    change: (m) => ({ ...m, data: { ...(m.data as Obj), attachments: [{ name: 'n', url: 'https://x', mimeType: 'a/b', extension: 'e' }] } }),
  },
  {
    name: 'attachment url too long',
    change: (m) => ({ ...m, data: { ...(m.data as Obj), attachments: [{ url: 'h'.repeat(3001), name: 'n', mimeType: 'a/b', extension: 'e' }] } }),
  },
  { name: 'tags 26', change: (m) => ({ ...m, tags: Array.from({ length: 26 }, (_, i) => `t${i}`) }) },
  { name: 'tag empty', change: (m) => ({ ...m, tags: [''] }) },
  { name: 'mentioned user without a name', change: (m) => ({ ...m, mentionedUserDetails: { u2: { uid: 'u2' } } }) },
  { name: 'mentioned user name too long', change: (m) => ({ ...m, mentionedUserDetails: { u2: { uid: 'u2', name: 'n'.repeat(101) } } }) },
  { name: 'mentioned user keys in another order', change: (m) => ({ ...m, mentionedUserDetails: { u2: { name: 'Bob', uid: 'u2' } } }) },
  { name: 'mentioned users not an object', change: (m) => ({ ...m, mentionedUserDetails: ['u2'] }) },
  { name: 'sender details with an unknown key', change: (m) => ({ ...m, senderUserDetails: { uid: 'u1', name: 'Ann', email: 'a@b' } }) },
  { name: 'null prototype item', change: (m) => Object.assign(Object.create(null) as Obj, m) },
  { name: 'a class instance', change: (m) => Object.assign(new (class Item {})(), m) as Obj },
]

const json = (v: unknown) => JSON.stringify(v)

describe('isCanonicalMessageImport: true only where MessageImport.safeParse succeeds with the same JSON', () => {
  const cases = GOOD.flatMap((item, i) => [
    { name: `good item ${i + 1}`, item },
    ...CHANGES.map(({ name, change }) => ({ name: `item ${i + 1}, ${name}`, item: change(item) })),
  ])
  it.each(cases)('$name', ({ item }) => {
    const parsed = MessageImport.safeParse(item)
    const fast = isCanonicalMessageImport(item)
    if (fast) {
      expect(parsed.success).toBe(true)
      expect(json(item)).toBe(json(parsed.data))
    } else if (parsed.success) {
      // Left to the schema although valid: only ever for keys out of zod's order, details the
      // mapping never sends, or items whose size the bound cannot settle.
      expect(json(item) !== json(parsed.data) || 'receiverGroupDetails' in item || JSON.stringify(item).length > 2000 || !isPlainRoot(item)).toBe(
        true,
      )
    }
  })

  it('passes every good item, and refuses every invalid one', () => {
    for (const item of GOOD) {
      expect(isCanonicalMessageImport(item)).toBe(true)
    }
    const invalid = cases.filter(({ item }) => !MessageImport.safeParse(item).success)
    expect(invalid.length).toBeGreaterThan(200)
    expect(invalid.filter(({ item }) => isCanonicalMessageImport(item))).toEqual([])
  })
})

describe('isCanonicalMessageImport checks every participant', () => {
  const item = (sender: string, receiver: string) => ({ ...(GOOD[0] as Obj), sender, receiver })
  it('refuses a bad sender or receiver every time it is asked, before and after good ones', () => {
    for (let round = 0; round < 3; round++) {
      expect(isCanonicalMessageImport(item('u1', 'g1'))).toBe(true)
      expect(isCanonicalMessageImport(item('U1', 'g1'))).toBe(false)
      expect(isCanonicalMessageImport(item('u1', 'g 1'))).toBe(false)
      expect(isCanonicalMessageImport(item('', 'g1'))).toBe(false)
    }
  })
})

function isPlainRoot(v: object): boolean {
  return Object.getPrototypeOf(v) === Object.prototype
}

describe("mapMessage's items take the cheap path", () => {
  it('builds message items in the schema order, so zod does not rebuild them', () => {
    const ctx = createMappingContext({
      now: Date.UTC(2025, 5, 1),
      policies: { mentions: 'rewrite' },
      users: { u1: { uid: 'u1', name: 'Ann', avatar: 'https://cdn.example/ann.png' }, u2: { uid: 'u2', name: 'Bob' } },
      groups: { g1: { guid: 'g1', name: 'General', type: 'public' } },
    })
    const r = mapMessage(
      {
        id: 'm1',
        senderId: 'u1',
        receiverType: 'group',
        receiverId: 'g1',
        type: 'text',
        text: 'hi <@uid:u2>',
        mentions: ['u2'],
        sentAt: Date.UTC(2025, 5, 1) - 60_000,
        deliveredAt: Date.UTC(2025, 5, 1) - 50_000,
        attachments: [{ url: 'https://x/a.png', name: 'a.png' }],
        reactions: [{ emoji: '👍', userId: 'u2' }],
        metadata: { legacyKey: 1 },
      },
      ctx,
    )
    expect(r.kind).toBe('items')
    const items = r.kind === 'items' ? r.items : []
    expect(items.length).toBe(1)
    for (const i of items) {
      expect(isCanonicalMessageImport(i.payload)).toBe(true)
    }
  })
})
