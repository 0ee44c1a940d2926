/**
 * The Rocket.Chat connector's pure parts: the BSON file reader on damaged files (files written
 * here with `bson`), value decoding, room kinds and the thumbnail and caption rules of messages.
 */
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { ObjectId, serialize } from 'bson'
import { describe, expect, it } from 'vitest'

import { type DumpDocument, readDumpDocuments } from '../../../../connectors/rocketchat/dump/bson-file.ts'
import { decodeMessage } from '../../../../connectors/rocketchat/entities/messages.ts'
import { roomKind } from '../../../../connectors/rocketchat/entities/room-kind.ts'
import { optionalId, optionalTime } from '../../../../connectors/rocketchat/entities/values.ts'
import { FieldProblem } from '../../../../connectors/sql/decode.ts'

function file(...parts: Uint8Array[]): string {
  const path = join(mkdtempSync(join(tmpdir(), 'chatferry-rc-unit-')), 'x.bson')
  writeFileSync(path, Buffer.concat(parts))
  return path
}

async function all(path: string, from?: { offset: number; index: number }): Promise<DumpDocument[]> {
  const out: DumpDocument[] = []
  for await (const batch of readDumpDocuments(path, from)) {
    out.push(...batch)
  }
  return out
}

const doc = (id: string) => serialize({ _id: id, msg: 'x'.repeat(10) })
const summary = (ds: DumpDocument[]) => ds.map((d) => (d.doc ? `${String(d.doc._id)}@${d.at.offset}` : `damage@${d.at.offset}: ${d.damage}`))

describe('reading a .bson file document by document', () => {
  const a = doc('a')
  const b = doc('b')
  const c = doc('c')

  it.each([
    { name: 'whole documents', parts: [a, b, c], want: ['a@0', `b@${a.length}`, `c@${a.length * 2}`] },
    { name: 'an empty file', parts: [], want: [] },
    { name: 'a tail too short for a length prefix', parts: [a, Uint8Array.from([1, 2])], want: ['a@0', `damage@${a.length}: truncated`] },
    { name: 'a document cut short', parts: [a, b.subarray(0, 10)], want: ['a@0', `damage@${a.length}: truncated`] },
    {
      name: 'a length prefix that is no document length: the bytes to the next readable document',
      parts: [a, Uint8Array.from([0xff, 0xff, 0xff, 0x7f]), b, c],
      want: [
        'a@0',
        `damage@${a.length}: length prefix 2147483647 at byte ${a.length} is not a BSON document's; bytes ${a.length}–${a.length + 4} (4) skipped to the next readable document, at byte ${a.length + 4}`,
        `b@${a.length + 4}`,
        `c@${a.length * 2 + 4}`,
      ],
    },
    {
      name: "a document's own length prefix damaged: that document, the next ones read",
      parts: [a, Uint8Array.from([0x00, 0x00, 0x00, 0x70]), b.subarray(4), c],
      want: [
        'a@0',
        `damage@${a.length}: length prefix 1879048192 at byte ${a.length} is not a BSON document's; bytes ${a.length}–${a.length * 2} (${a.length}) skipped to the next readable document, at byte ${a.length * 2}`,
        `c@${a.length * 2}`,
      ],
    },
    {
      name: 'garbage between documents, with a length that fits in the file',
      parts: [a, Uint8Array.from([0x10, 0x00, 0x00, 0x00, 0x41, 0x42, 0x43]), b],
      want: ['a@0', `damage@${a.length}: invalid BSON at byte ${a.length}`, `b@${a.length + 7}`],
    },
    {
      name: 'a damaged prefix with nothing readable after it: the rest of the file, as a byte range',
      parts: [a, Uint8Array.from([0xff, 0xff, 0xff, 0x7f, 1, 2, 3, 4, 5, 6])],
      want: [
        'a@0',
        `damage@${a.length}: length prefix 2147483647 at byte ${a.length} is not a BSON document's; no readable document follows: bytes ${a.length}–${a.length + 10} (10) cannot be read`,
      ],
    },
    {
      name: 'invalid BSON inside a sound length: that document only',
      parts: [a, Uint8Array.from([...b.subarray(0, b.length - 1), 0x07]), c],
      want: ['a@0', `damage@${a.length}: invalid BSON at byte ${a.length}`, `c@${a.length * 2}`],
    },
  ])('$name', async ({ parts, want }) => {
    // Each entry starts with what is wanted (a damage's reason goes on with details).
    const got = summary(await all(file(...parts)))
    expect(got.map((g, i) => (g.startsWith(want[i] ?? '\0') ? want[i] : g))).toEqual(want)
  })

  it('resumes at a byte offset and counts indexes on', async () => {
    const path = file(a, b, c)
    const first = await all(path)
    const rest = await all(path, first[0]?.next)
    expect(rest.map((d) => [d.doc?._id, d.at.index])).toEqual([
      ['b', 1],
      ['c', 2],
    ])
  })

  it('reads documents larger than its buffer', async () => {
    const big = serialize({ _id: 'big', msg: 'y'.repeat(3 * 1024 * 1024) })
    const got = await all(file(a, big, c))
    expect(got.map((d) => d.doc?._id)).toEqual(['a', 'big', 'c'])
  })
})

describe('values', () => {
  it.each([
    { v: 'GENERAL', want: 'GENERAL' },
    { v: new ObjectId('668fc2bbffe932842327c1fd'), want: '668fc2bbffe932842327c1fd' },
    { v: undefined, want: undefined },
    { v: '', want: undefined },
    { v: 42, problem: 'is a number, not an id' },
  ])('id $v', ({ v, want, problem }) => {
    if (problem) {
      expect(() => optionalId('_id', v)).toThrow(problem)
    } else {
      expect(optionalId('_id', v)).toBe(want)
    }
  })

  it.each([
    { v: new Date(Date.UTC(2024, 0, 1)), want: Date.UTC(2024, 0, 1) },
    { v: null, want: undefined },
    { v: '2024-01-01', problem: 'is a string, not a date' },
    { v: new Date(-5), problem: 'outside 1970–9999' },
    { v: new Date(Number.NaN), problem: 'outside 1970–9999' },
  ])('time $v', ({ v, want, problem }) => {
    if (problem) {
      expect(() => optionalTime('ts', v)).toThrow(problem)
    } else {
      expect(optionalTime('ts', v)).toBe(want)
    }
  })
})

describe('room kinds', () => {
  const ids = new Map([
    ['alice', 'A'],
    ['bob', 'B'],
  ])
  const lookup = (n: string) => ids.get(n)
  it.each([
    { room: { t: 'c' }, want: { kind: 'channel' } },
    { room: { t: 'p', prid: 'GENERAL' }, want: { kind: 'channel' } },
    { room: { t: 'd', uids: ['A', 'B'] }, want: { kind: 'direct', uids: ['A', 'B'] } },
    { room: { t: 'd', uids: ['A'] }, want: { kind: 'direct', uids: ['A'] } },
    { room: { t: 'd', uids: ['A', 'A'] }, want: { kind: 'direct', uids: ['A'] } },
    { room: { t: 'd', uids: ['A', 'B', 'C'] }, want: { kind: 'group-dm', uids: ['A', 'B', 'C'] } },
    { room: { t: 'd', usernames: ['alice', 'bob'] }, want: { kind: 'direct', uids: ['A', 'B'] } },
    { room: { t: 'd', usernames: ['alice', 'zed'] }, want: { kind: 'unknown', field: 'usernames' } },
    { room: { t: 'd' }, want: { kind: 'unknown', field: 'uids' } },
    { room: { t: 'l' }, want: { kind: 'omnichannel' } },
    { room: { t: 'v' }, want: { kind: 'omnichannel' } },
    { room: { t: 'x' }, want: { kind: 'unknown', field: 't' } },
  ])('$room', ({ room, want }) => {
    expect(roomKind(room, lookup)).toMatchObject(want)
  })
})

describe('messages: uploads', () => {
  const ctx = { roomOf: () => ({ kind: 'channel' }) as const, idOfUsername: () => undefined, uploadsBaseUrl: 'https://f.example' }
  const base = { _id: 'm1', rid: 'GENERAL', u: { _id: 'A', username: 'alice' }, ts: new Date(0) }
  it.each([
    {
      name: 'an image and its generated thumbnail: the thumbnail is left out, the caption is the text',
      msg: {
        msg: '',
        files: [
          { _id: 'f1', name: 'a b.png', type: 'image/png', size: 10, format: 'png' },
          { _id: 't1', name: 'thumb-a b.png', type: 'image/png', size: 2, typeGroup: 'image' },
        ],
        attachments: [{ title: 'a b.png', fileId: 'f1', image_url: '/file-upload/t1/a%20b.png', description: 'look' }],
      },
      want: { type: 'image', text: 'look', urls: ['https://f.example/file-upload/f1/a%20b.png'] },
    },
    {
      name: 'the old single file field',
      msg: { msg: 'see', file: { _id: 'f2', name: 'r.pdf', type: 'application/pdf' } },
      want: { type: 'file', text: 'see', urls: ['https://f.example/file-upload/f2/r.pdf'] },
    },
    {
      name: 'a deleted upload (t: rm): nothing',
      msg: { msg: '', t: 'rm', file: { _id: 'f3', name: 'x.png', type: 'image/png' }, editedAt: new Date(5) },
      want: { type: 'text', text: '', urls: undefined },
    },
  ])('$name', ({ msg, want }) => {
    const m = decodeMessage({ ...base, ...msg }, ctx)
    expect({ type: m.type, text: m.text, urls: m.attachments?.map((a) => a.url) }).toEqual(want)
  })

  it('a file entry without an id is a problem on that entry', () => {
    expect(() => decodeMessage({ ...base, files: [{ name: 'x' }] }, ctx)).toThrow(FieldProblem)
    try {
      decodeMessage({ ...base, files: [{ name: 'x' }] }, ctx)
    } catch (err) {
      expect((err as FieldProblem).field).toBe('files.0._id')
    }
  })
})

describe('messages: integration cards and shared locations arrive as text', () => {
  const ctx = { roomOf: () => ({ kind: 'channel' }) as const, idOfUsername: () => undefined, uploadsBaseUrl: 'https://f.example' }
  const base = { _id: 'm1', rid: 'GENERAL', u: { _id: 'A', username: 'alice' }, ts: new Date(0), msg: '' }
  it.each([
    {
      name: 'a quote: its author and text after the message, its link kept',
      msg: 'agreed',
      attachments: [{ text: 'q', message_link: 'https://c.example/x', author_name: 'bob' }],
      want: { text: 'agreed\n\nbob\nq', cards: [{ message_link: 'https://c.example/x' }], asText: 1 },
    },
    {
      name: 'a webhook card whose text is only in pretext and fields (msg empty)',
      msg: '',
      attachments: [{ color: '#f00', pretext: 'Build failed', fields: [{ title: 'Branch', value: 'main', short: true }, { short: true }] }],
      want: { text: 'Build failed\nBranch: main', cards: [{ color: '#f00' }], asText: 1 },
    },
    {
      name: 'a GitHub card: title with its link, text, image; two cards a blank line apart',
      msg: '',
      attachments: [
        {
          title: 'PR #7 merged',
          title_link: 'https://gh.example/pr/7',
          text: 'Fix it',
          image_url: 'https://gh.example/i.png',
          author_icon: 'https://gh.example/a.png',
        },
        { fallback: 'CI: green' },
      ],
      want: {
        text: 'PR #7 merged (https://gh.example/pr/7)\nFix it\nhttps://gh.example/i.png\n\nCI: green',
        cards: [{ author_icon: 'https://gh.example/a.png' }],
        asText: 2,
      },
    },
    {
      name: 'a card with nothing readable: kept in metadata, no text',
      msg: 'hi',
      attachments: [{ color: 'good', actions: [{ type: 'button', text: '' }] }],
      want: { text: 'hi', cards: [{ color: 'good', actions: [{ type: 'button', text: '' }] }], asText: undefined },
    },
  ])('$name', ({ msg, attachments, want }) => {
    const m = decodeMessage({ ...base, msg, attachments }, ctx)
    expect({ text: m.text, cards: m.metadata?.attachments, asText: m.metadata?.attachmentsAsText }).toEqual(want)
  })

  it("an app's UI-kit blocks (msg empty) arrive as text; buttons and dividers give none", () => {
    const blocks = [
      { type: 'section', text: { type: 'mrkdwn', text: '*Deploy* requested' }, fields: [{ type: 'plain_text', text: 'env: prod' }] },
      { type: 'divider' },
      {
        type: 'context',
        elements: [
          { type: 'plain_text', text: 'by alice' },
          { type: 'image', imageUrl: 'https://x.example/a.png', altText: 'avatar' },
        ],
      },
      { type: 'actions', elements: [{ type: 'button', text: { type: 'plain_text', text: 'Approve' }, actionId: 'ok' }] },
      { type: 'conditional', when: { engine: ['rocket.chat'] }, render: [{ type: 'image', imageUrl: 'https://x.example/g.png', altText: 'graph' }] },
    ]
    const m = decodeMessage({ ...base, blocks }, ctx)
    expect({ text: m.text, n: m.metadata?.blocksAsText }).toEqual({
      text: '*Deploy* requested\nenv: prod\n\nby alice\navatar\n\ngraph\nhttps://x.example/g.png',
      n: 3,
    })
  })

  it('a shared location (msg empty) is a map link, its coordinates in metadata', () => {
    const m = decodeMessage({ ...base, location: { type: 'Point', coordinates: [13.405, 52.52] } }, ctx)
    expect({ text: m.text, location: m.metadata?.location }).toEqual({
      text: 'Shared location: https://maps.google.com/maps?daddr=52.52,13.405',
      location: { latitude: 52.52, longitude: 13.405 },
    })
  })

  it.each([[{ type: 'Point' }], [{ type: 'Point', coordinates: ['13', 52] }], [{ type: 'Point', coordinates: [200, 52] }]])(
    'a location without readable coordinates is a problem on location.coordinates: %j',
    (location) => {
      expect(() => decodeMessage({ ...base, location }, ctx)).toThrow(expect.objectContaining({ field: 'location.coordinates' }) as Error)
    },
  )
})

describe('messages: an upload with both a message and a caption', () => {
  const ctx = { roomOf: () => ({ kind: 'channel' }) as const, idOfUsername: () => undefined, uploadsBaseUrl: 'https://f.example' }
  const base = { _id: 'm1', rid: 'GENERAL', u: { _id: 'A', username: 'alice' }, ts: new Date(0), file: { _id: 'f1', name: 'a.pdf' } }
  it.each([
    { name: 'caption only: the text', msg: '', description: 'the plan', want: { text: 'the plan', caption: undefined } },
    { name: 'message and the same caption', msg: 'the plan', description: 'the plan', want: { text: 'the plan', caption: undefined } },
    { name: 'message and another caption: both kept', msg: 'see this', description: 'Q3 plan', want: { text: 'see this', caption: 'Q3 plan' } },
  ])('$name', ({ msg, description, want }) => {
    const m = decodeMessage({ ...base, msg, attachments: [{ title: 'a.pdf', fileId: 'f1', description }] }, ctx)
    expect({ text: m.text, caption: m.metadata?.caption }).toEqual(want)
  })
})
