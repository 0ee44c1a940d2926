/**
 * The Stream Chat export's streaming readers (connectors/stream-chat/export/): values picked out
 * of one JSON document and lines of a JSONL file come out the same whatever the chunk boundaries,
 * an oversized or non-UTF-8 value is one `bad` item and the read goes on, a broken document
 * ends with one `broken` item, and values only counted (`unread`) come in the same places.
 */
import { describe, expect, it } from 'vitest'

import { jsonLines } from '../../../../connectors/stream-chat/export/json-lines.ts'
import { type JsonPath, jsonValues } from '../../../../connectors/stream-chat/export/json-values.ts'

async function* chunks(bytes: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < bytes.length; i += size) {
    yield bytes.subarray(i, i + size)
  }
}

const want = (p: JsonPath) => (p.length === 3 && p[1] === 'messages' ? 'message' : p.length === 2 && p[1] === 'channel' ? 'channel' : undefined)

/** A value's text as the connector reads it: JSON, or its own bad item (connectors/stream-chat/export/events.ts). */
function parsed(path: JsonPath, text: string): unknown {
  try {
    return { path: path.join('.'), value: JSON.parse(text) as unknown }
  } catch (err) {
    return { path: path.join('.'), bad: `not JSON: ${(err as Error).message}` }
  }
}

const messagesUnread = (tag: string) => tag === 'message'

async function pick(text: string | Buffer, size: number, maxValueBytes = 1000, unread?: (tag: string) => boolean) {
  const out: unknown[] = []
  const bytes = typeof text === 'string' ? Buffer.from(text) : text
  for await (const item of jsonValues(chunks(bytes, size), want, { maxDepth: 3, maxValueBytes, ...(unread ? { unread } : {}) })) {
    out.push(
      item.kind === 'value'
        ? parsed(item.path, item.text)
        : item.kind === 'bad'
          ? { path: item.path.join('.'), bad: item.reason }
          : item.kind === 'unread'
            ? { path: item.path.join('.'), unread: item.tag }
            : { broken: item.reason },
    )
  }
  return out
}

/** What a full read's items become when messages are only counted: a message's item is `unread` in its place. */
const asCounted = (items: unknown[]) =>
  items.map((i) => {
    const path = (i as { path?: string }).path
    return path !== undefined && path.split('.')[1] === 'messages' ? { path, unread: 'message' } : i
  })

const doc = [
  {
    channel: { cid: 'messaging:a', name: 'with "quotes" and \\ and ] and }' },
    skipped: { messages: [{ id: 'not wanted' }] },
    messages: [{ id: 'm1', text: '[{,:}]', n: [1, 2.5e3, true, null] }, 'a string', 42, null, { id: 'm2', 'key "x"': {} }],
    members: [],
  },
  { messages: [], channel: { cid: 'team:b' } },
]

describe('jsonValues', () => {
  const text = `\uFEFF${JSON.stringify(doc, null, 2)}`
  const want = [
    { path: '0.channel', value: doc[0]?.channel },
    ...(doc[0]?.messages ?? []).map((value, i) => ({ path: `0.messages.${i}`, value })),
    { path: '1.channel', value: doc[1]?.channel },
  ]
  it.each([1, 2, 3, 7, 64, 1 << 20])('yields the wanted values whatever the chunk size (%i)', async (size) => {
    expect(await pick(text, size)).toEqual(want)
  })
  it('an oversized value and a non-UTF-8 one are bad items, and the values after them are read', async () => {
    const big = JSON.stringify([{ channel: {}, messages: [{ t: 'x'.repeat(50) }, { id: 'ok' }] }])
    expect(await pick(big, 5, 40)).toEqual([
      { path: '0.channel', value: {} },
      { path: '0.messages.0', bad: 'larger than the 40-byte cap (maxElementBytes)' },
      { path: '0.messages.1', value: { id: 'ok' } },
    ])
    const latin1 = Buffer.concat([Buffer.from('[{"messages":[{"t":"caf'), Buffer.from([0xe9]), Buffer.from('"},{"id":"ok"}]}]')])
    expect(await pick(latin1, 4)).toEqual([
      { path: '0.messages.0', bad: 'not UTF-8 text' },
      { path: '0.messages.1', value: { id: 'ok' } },
    ])
  })
  it.each([1, 3, 64])('a value with a mistake inside its own brackets is its own bad item, and the read goes on (%i)', async (size) => {
    const items = await pick('[{"messages":[{"id":"a",},{"id":"b" "c"},{"id":"ok","n":[{}]}]}]', size)
    expect(items).toEqual([
      { path: '0.messages.0', bad: expect.stringContaining('not JSON') as unknown },
      { path: '0.messages.1', bad: expect.stringContaining('not JSON') as unknown },
      { path: '0.messages.2', value: { id: 'ok', n: [{}] } },
    ])
  })
  it.each([
    ['[{"messages":[{"id":"a","n":[1}]}]', 'unexpected "}"'],
    ['[{"messages":[{"id":"a"},', 'the document breaks off'],
    ['[{"messages":[{"id":"a"},]}]', 'a trailing ","'],
    ['[{"messages":[{"id":"a"}}]', 'unexpected "}"'],
    ['[] []', 'more text after the JSON document'],
  ])('ends a broken document with one broken item: %s', async (text, reason) => {
    const items = await pick(text, 3)
    expect(items.at(-1)).toEqual({ broken: expect.stringContaining(reason) as unknown })
    expect(items.filter((i) => 'broken' in (i as object))).toHaveLength(1)
  })
  it.each([1, 3, 64, 1 << 20])('values only counted come where the full read puts its items, broken or not (%i)', async (size) => {
    const texts: (string | Buffer)[] = [
      `\uFEFF${JSON.stringify(doc, null, 2)}`,
      JSON.stringify([{ channel: {}, messages: [{ t: 'x'.repeat(50) }, { id: 'ok' }] }]),
      Buffer.concat([Buffer.from('[{"messages":[{"t":"caf'), Buffer.from([0xe9]), Buffer.from('"},{"id":"ok"}]}]')]),
      '[{"messages":[{"id":"a",},{"id":"b" "c"},{"id":"ok","n":[{}]}]}]',
      '[{"messages":[{"id":"a","n":[1}]}]',
      '[{"messages":[{"id":"a"},',
      '[{"messages":[{"id":"a"}}], "channel": {"cid": "x:y"}}]',
    ]
    for (const text of texts) {
      const full = await pick(text, size, 40)
      const counted = await pick(text, size, 40, messagesUnread)
      expect(counted).toEqual(asCounted(full))
    }
  })
})

describe('jsonLines', () => {
  it.each([1, 4, 1024])('splits lines across chunks (%i), skips blank ones, numbers them, caps them', async (size) => {
    const text = `{"a":1}\r\n\n{"b":"${'y'.repeat(30)}"}\n{"c":3}`
    const got = []
    for await (const l of jsonLines(chunks(Buffer.from(text), size), 20)) {
      got.push(l)
    }
    expect(got).toEqual([
      { kind: 'line', line: 1, text: '{"a":1}\r' },
      { kind: 'bad', line: 3, reason: 'line 3 is larger than the 20-byte cap (maxElementBytes)' },
      { kind: 'line', line: 4, text: '{"c":3}' },
    ])
  })

  it.each([1, 3, 7, 64, 4096])(
    'reads the same lines whatever the chunk size (%i): marks, multi-byte text at the cap, a line not UTF-8',
    async (size) => {
      const bytes = Buffer.concat([
        // The last line is not UTF-8: with large chunks, the lines before it are decoded together.
        Buffer.from('\uFEFF{"a":"b"}\n  \t\r\n{"e":"€€€€€€"}\n{"f":"€€€€€€€"}\n\uFEFF\n\n{"z":"👍"}\n'),
        Buffer.from([0x7b, 0xff, 0x7d]),
      ])
      const got = []
      for await (const l of jsonLines(chunks(bytes, size), 26)) {
        got.push(l)
      }
      expect(got).toEqual([
        { kind: 'line', line: 1, text: '{"a":"b"}' },
        { kind: 'line', line: 3, text: '{"e":"€€€€€€"}' },
        { kind: 'bad', line: 4, reason: 'line 4 is larger than the 26-byte cap (maxElementBytes)' },
        { kind: 'line', line: 7, text: '{"z":"👍"}' },
        { kind: 'bad', line: 8, reason: 'line 8 is not UTF-8 text' },
      ])
    },
  )
})
