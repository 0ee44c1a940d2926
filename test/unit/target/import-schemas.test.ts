import { describe, expect, it } from 'vitest'

import { IMPORT_ITEM_SCHEMAS, jsonSizeBound, LIMITS } from '../../../src/target/schemas.ts'

const utf8 = (v: unknown) => Buffer.byteLength(JSON.stringify(v), 'utf8')

describe('jsonSizeBound: never below the JSON length or its UTF-8 bytes', () => {
  it.each([
    { name: 'empty object', value: {} },
    { name: 'empty string', value: '' },
    { name: 'ASCII text', value: 'hello world' },
    { name: 'quotes and backslashes', value: '"\\"\\\\' },
    { name: 'control characters', value: '\u0000\u0001\u001f\n\t' },
    { name: 'two-byte UTF-8', value: 'déjà vu, ñandú' },
    { name: 'three-byte UTF-8', value: '日本語のテキスト' },
    { name: 'astral characters (surrogate pairs)', value: '😀🎉𝄞' },
    { name: 'lone surrogate (escaped as \\uXXXX)', value: 'a\ud800b' },
    { name: 'long negative float', value: -1.2345678901234567e-308 },
    { name: 'large integer', value: 9_999_999_999 },
    { name: 'booleans and null', value: [true, false, null] },
    { name: 'undefined members are dropped by JSON', value: { a: undefined, b: [undefined] } },
    { name: 'keys that need escaping', value: { 'k"\n😀': 'v' } },
    {
      name: 'nested message data',
      value: {
        text: 'hi <@uid:u1>',
        attachments: [{ url: 'https://x/y.png', name: 'y.png', mimeType: 'image/png', extension: 'png', size: '12' }],
        metadata: { '@chatferry': { id: 'm1', reactions: { '👍': ['u1', 'u2'] } } },
      },
    },
    { name: 'null-prototype object', value: Object.assign(Object.create(null) as object, { a: 'é' }) },
  ])('$name', ({ value }) => {
    const bound = jsonSizeBound(value)
    expect(bound).toBeGreaterThanOrEqual(JSON.stringify(value).length)
    expect(bound).toBeGreaterThanOrEqual(utf8(value))
  })

  it.each([
    { name: 'a Date (toJSON)', value: { at: new Date(0) } },
    { name: 'a Map', value: { m: new Map() } },
    { name: 'a bigint', value: { n: 1n } },
    { name: 'a function', value: { f: () => 1 } },
  ])('is Infinity for $name, so the caller measures exactly', ({ value }) => {
    expect(jsonSizeBound(value)).toBe(Number.POSITIVE_INFINITY)
  })

  it('stops early once over the budget, still returning more than the budget', () => {
    const big = { parts: Array.from({ length: 1000 }, () => 'x'.repeat(100)) }
    expect(jsonSizeBound(big, 1000)).toBeGreaterThan(1000)
    expect(jsonSizeBound(big, 1000)).toBeLessThan(jsonSizeBound(big))
  })
})

describe('MessageImport size limits (the bound only skips the exact check for small items)', () => {
  const base = { muid: 'm1', sender: 'u1', receiverType: 'group', receiver: 'g1', sentAt: 1_700_000_000 }
  const withText = (text: string) => ({ ...base, type: 'text', data: { text } })
  it.each([
    { name: 'small text', item: withText('hello'), ok: true },
    { name: 'ASCII text exactly at the data limit', item: withText('a'.repeat(LIMITS.MESSAGE_DATA_BYTES_MAX - '{"text":""}'.length)), ok: true },
    {
      name: 'ASCII text one byte over the data limit',
      item: withText('a'.repeat(LIMITS.MESSAGE_DATA_BYTES_MAX - '{"text":""}'.length + 1)),
      ok: false,
      path: 'data',
    },
    { name: '3-byte characters under the limit in length but over it in bytes', item: withText('語'.repeat(4000)), ok: false, path: 'data' },
    { name: '3-byte characters within the limit', item: withText('語'.repeat(3000)), ok: true },
    {
      name: 'metadata over the whole payload limit',
      item: { ...withText('hi'), data: { text: 'hi', metadata: { blob: 'a'.repeat(70_000) } } },
      ok: false,
      path: 'data',
    },
  ])('$name', ({ item, ok, path }) => {
    const r = IMPORT_ITEM_SCHEMAS.messages.safeParse(item)
    expect(r.success).toBe(ok)
    if (!ok && path !== undefined) {
      expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path)
    }
  })

  it.each([
    { name: 'an array as metadata', metadata: ['a'], ok: false },
    { name: 'a Date as metadata', metadata: new Date(0), ok: false },
    { name: 'a plain object as metadata', metadata: { a: 1 }, ok: true },
    { name: 'a null-prototype object as metadata', metadata: Object.assign(Object.create(null) as object, { a: 1 }), ok: true },
  ])('metadata: $name', ({ metadata, ok }) => {
    const r = IMPORT_ITEM_SCHEMAS.users.safeParse({ uid: 'u1', name: 'U', metadata })
    expect(r.success).toBe(ok)
    if (!ok) {
      expect(r.error?.issues[0]?.message).toMatch(/^must be a JSON object, got an (array|object)$/)
    }
  })

  it.each([
    { id: 'a'.repeat(100), ok: true },
    { id: 'a'.repeat(101), ok: false },
    { id: '', ok: false },
    { id: 'Upper', ok: false },
    { id: 'with space', ok: false },
    { id: 'ok_id-1', ok: true },
  ])('platform id $id.length chars "$id"', ({ id, ok }) => {
    expect(IMPORT_ITEM_SCHEMAS.users.safeParse({ uid: id, name: 'U' }).success).toBe(ok)
  })
})

describe('leaf checks: each bad value is named by its path and the rule it breaks', () => {
  const message = { muid: 'm1', sender: 'u1', receiverType: 'user', receiver: 'u2', data: { text: 'hi' }, sentAt: 1_700_000_000 }
  it.each([
    {
      name: 'a number as id',
      item: { ...message, sender: 7 },
      path: 'sender',
      says: 'must be 1–100 characters of lowercase alpha-dash (a-z, 0-9, -, _), got 7',
    },
    { name: 'an uppercase id', item: { ...message, receiver: 'Bob' }, path: 'receiver', says: 'got "Bob"' },
    { name: 'a missing id', item: { ...message, muid: undefined }, path: 'muid', says: 'required: 1–100 characters' },
    {
      name: 'seconds with a fraction',
      item: { ...message, sentAt: 1.5 },
      path: 'sentAt',
      says: 'must be an integer of UNIX seconds, 0–9999999999, got 1.5',
    },
    { name: 'milliseconds instead of seconds', item: { ...message, sentAt: 1_700_000_000_000 }, path: 'sentAt', says: 'got 1700000000000' },
    { name: 'negative seconds', item: { ...message, readAt: -1 }, path: 'readAt', says: 'got -1' },
    { name: 'seconds as text', item: { ...message, sentAt: '1700000000' }, path: 'sentAt', says: 'got "1700000000"' },
    { name: 'an empty type', item: { ...message, type: '' }, path: 'type', says: 'must be a non-empty string, got ""' },
    {
      name: 'a mentioned user with an empty name',
      item: { ...message, mentionedUserDetails: { u3: { uid: 'u3', name: '' } } },
      path: 'mentionedUserDetails.u3.name',
      says: 'must be a string of 1–100 characters',
    },
    {
      name: 'an object as a name',
      item: { ...message, senderUserDetails: { uid: 'u1', name: { first: 'A' } } },
      path: 'senderUserDetails.name',
      says: 'got an object',
    },
    {
      name: 'a function as a name (from a user module)',
      item: { ...message, senderUserDetails: { uid: 'u1', name: () => 'A' } },
      path: 'senderUserDetails.name',
      says: 'got a function',
    },
    { name: 'a long bad id is shortened', item: { ...message, sender: 'X'.repeat(200) }, path: 'sender', says: `got "${'X'.repeat(40)}…"` },
  ])('$name', ({ item, path, says }) => {
    const r = IMPORT_ITEM_SCHEMAS.messages.safeParse(item)
    expect(r.success).toBe(false)
    const issue = r.error?.issues[0]
    expect(issue?.path.join('.')).toBe(path)
    expect(issue?.message).toContain(says)
  })

  it.each([
    { name: 'a 101-character user name', item: { uid: 'u1', name: 'n'.repeat(101) }, ok: false },
    { name: 'a 100-character user name', item: { uid: 'u1', name: 'n'.repeat(100) }, ok: true },
    { name: 'seconds at the 10-digit limit', item: { uid: 'u1', name: 'U', createdAt: 9_999_999_999 }, ok: true },
    { name: 'seconds past the 10-digit limit', item: { uid: 'u1', name: 'U', createdAt: 10_000_000_000 }, ok: false },
    { name: 'zero seconds', item: { uid: 'u1', name: 'U', lastActiveAt: 0 }, ok: true },
    { name: 'NaN seconds', item: { uid: 'u1', name: 'U', lastActiveAt: Number.NaN }, ok: false },
  ])('users: $name', ({ item, ok }) => {
    expect(IMPORT_ITEM_SCHEMAS.users.safeParse(item).success).toBe(ok)
  })
})

describe('send-time rules of the published platform: a known-bad item is refused with its field path', () => {
  const base = { muid: 'm1', sender: 'u1', receiverType: 'user', receiver: 'u2', sentAt: 1_700_000_000 }
  const file = (size: unknown) => ({
    ...base,
    type: 'file',
    data: { attachments: [{ url: 'https://files.example/a.pdf', name: 'a.pdf', mimeType: 'application/pdf', extension: 'pdf', size }] },
  })
  const mentioned = Object.fromEntries(Array.from({ length: 700 }, (_, n) => [`p${n}`, { uid: `p${n}`, name: 'n'.repeat(100) }]))
  it.each([
    { name: 'empty text', item: { ...base, data: { text: '' } }, path: 'data.text' },
    { name: 'whitespace-only text', item: { ...base, data: { text: ' \n\t' } }, path: 'data.text' },
    { name: 'no data on a text message', item: base, path: 'data.text' },
    { name: 'data over 10,240 bytes', item: { ...base, data: { text: 'x'.repeat(10_240) } }, path: 'data' },
    { name: 'data over 10 KB through an additional property', item: { ...base, data: { text: 'hi', blob: 'x'.repeat(10_240) } }, path: 'data' },
    {
      name: 'payload over 65,536 characters with data under 10 KB',
      item: { ...base, data: { text: 'hi' }, mentionedUserDetails: mentioned },
      path: '',
    },
    { name: 'attachment size as a JSON number (documented as a string)', item: file(350), path: 'data.attachments.0.size' },
    { name: 'attachment size that is not a number', item: file('350 bytes'), path: 'data.attachments.0.size' },
    { name: 'attachment size negative', item: file('-1'), path: 'data.attachments.0.size' },
    { name: 'attachment size in exponent notation', item: file('1e3'), path: 'data.attachments.0.size' },
    { name: 'a U+0000 in an additional data property', item: { ...base, data: { text: 'hi', extra: { k: 'a\u0000b' } } }, path: 'data.extra' },
    { name: 'a file message without attachments', item: { ...base, type: 'file', data: { text: 'x' } }, path: 'data.attachments' },
    { name: 'a custom message without customData', item: { ...base, category: 'custom', type: 'poll', data: {} }, path: 'data.customData' },
  ])('$name → $path', ({ item, path }) => {
    const r = IMPORT_ITEM_SCHEMAS.messages.safeParse(item)
    expect(r.success).toBe(false)
    expect(r.error?.issues.map((i) => i.path.join('.'))).toContain(path)
  })

  it.each([
    {
      name: 'additional data properties (documented: "any additional properties")',
      item: { ...base, data: { text: 'hi', custodata: { a: [1, 'b'] }, n: 1 } },
    },
    { name: 'a decimal attachment size, the documented example "350.2"', item: file('350.2') },
    { name: 'an integer attachment size as a string', item: file('350') },
    { name: 'no attachment size', item: file(undefined) },
  ])('accepts $name', ({ item }) => {
    const r = IMPORT_ITEM_SCHEMAS.messages.safeParse(item)
    expect(r.success, JSON.stringify(r.error?.issues)).toBe(true)
  })

  it('keeps additional data properties in the parsed item (they are sent as given)', () => {
    const r = IMPORT_ITEM_SCHEMAS.messages.safeParse({ ...base, data: { text: 'hi', custodata: { a: 1 } } })
    expect(r.data?.data).toEqual({ text: 'hi', custodata: { a: 1 } })
  })
})
