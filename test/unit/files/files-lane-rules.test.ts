/**
 * The files lane's pure rules (issue 27), as tables: how a message goes with its files
 * (`attachFiles`), the retry delay, dead lease holders, the URL map's
 * CSV fields, and planning's files of a message and `omit`.
 */
import { describe, expect, it } from 'vitest'

import { csvField } from '../../../src/cli/commands/files.ts'
import { retryDelayMs } from '../../../src/files/lane/retry-delay.ts'
import { deadHolders } from '../../../src/files/lane/take-over-file-leases.ts'
import { filesOfMessage, httpLocator, omitAttachments } from '../../../src/plan/message-files.ts'
import { attachFiles } from '../../../src/state/file-payload.ts'
import type { LinkedFileRow } from '../../../src/state/sql/select-linked-files.ts'
import type { MessageImport } from '../../../src/target/schemas.ts'

const A = 'https://legacy.example/a.png'
const B = 'https://legacy.example/b.pdf'
const payload = (attachments: string[], text?: string, type = 'image') =>
  JSON.stringify({
    muid: 'm1',
    type,
    category: 'message',
    data: {
      ...(text !== undefined ? { text } : {}),
      attachments: attachments.map((url) => ({ url, name: url.split('/').pop(), mimeType: 'image/png', extension: 'png' })),
    },
  })
const file = (legacyUrl: string, over: Partial<LinkedFileRow>): LinkedFileRow => ({
  targetKey: 'm1',
  ord: 0,
  state: 'copied',
  onFailure: null,
  legacyUrl,
  name: legacyUrl.split('/').pop() as string,
  publicUrl: `https://cdn.example/${legacyUrl.split('/').pop()}`,
  bytes: 42,
  sniffedType: 'image/png',
  ...over,
})

describe('attachFiles', () => {
  const cases: {
    name: string
    payload: string
    files: LinkedFileRow[]
    urls: string[]
    text?: string
    type?: string
    counts: [number, number, number]
  }[] = [
    { name: 'no files: unchanged', payload: payload([A]), files: [], urls: [A], counts: [0, 0, 0] },
    {
      name: 'copied: the store URL',
      payload: payload([A, B]),
      files: [file(A, {}), file(B, { ord: 1 })],
      urls: ['https://cdn.example/a.png', 'https://cdn.example/b.pdf'],
      counts: [2, 0, 0],
    },
    {
      name: 'failed, link-original: the legacy URL',
      payload: payload([A, B]),
      files: [file(A, { state: 'failed', onFailure: 'link-original' }), file(B, {})],
      urls: [A, 'https://cdn.example/b.pdf'],
      counts: [1, 1, 0],
    },
    {
      name: 'failed, note: dropped and named',
      payload: payload([A, B], 'hi'),
      files: [file(A, { state: 'failed', onFailure: 'note' }), file(B, {})],
      urls: ['https://cdn.example/b.pdf'],
      text: 'hi\n\n[file not migrated: a.png]',
      counts: [1, 0, 1],
    },
    {
      name: 'all noted, no text: a text message with the note',
      payload: payload([A, B]),
      files: [file(A, { state: 'failed', onFailure: 'note' }), file(B, { state: 'failed', onFailure: 'note' })],
      urls: [],
      text: '[files not migrated: a.png, b.pdf]',
      type: 'text',
      counts: [0, 0, 2],
    },
    { name: 'skipped: the legacy URL', payload: payload([A]), files: [file(A, { state: 'skipped', publicUrl: null })], urls: [A], counts: [0, 0, 0] },
    {
      name: 'one file twice in a message',
      payload: payload([A, A]),
      files: [file(A, {}), file(A, { ord: 1 })],
      urls: ['https://cdn.example/a.png', 'https://cdn.example/a.png'],
      counts: [2, 0, 0],
    },
  ]
  it.each(cases)('$name', (c) => {
    const out = attachFiles(c.payload, c.files)
    const sent = JSON.parse(out.payload) as { type: string; data: { text?: string; attachments?: { url: string; size?: string }[] } }
    expect((sent.data.attachments ?? []).map((a) => a.url)).toEqual(c.urls)
    expect([out.copied, out.linkedOriginal, out.noted]).toEqual(c.counts)
    if (c.text !== undefined) {
      expect(sent.data.text).toBe(c.text)
    }
    expect(sent.type).toBe(c.type ?? 'image')
    if (c.counts[0] > 0) {
      expect(sent.data.attachments?.find((a) => a.url.startsWith('https://cdn'))?.size).toBe('42')
    }
  })
})

describe('retryDelayMs', () => {
  it.each([
    [0, undefined, 0.5, 1000],
    [3, undefined, 0.5, 8000],
    [3, undefined, 0, 6400],
    [30, undefined, 0.5, 300_000],
    [0, 5000, 0.5, 5000],
    [0, 3_600_000, 0.5, 300_000],
  ])('after %i attempts, Retry-After %s → %s', (attempts, retryAfter, random, want) => {
    expect(retryDelayMs(attempts, retryAfter, () => random)).toBe(want)
  })
})

describe('deadHolders', () => {
  it('only holders of this host whose process is gone, never this process', () => {
    const alive = (pid: number) => pid === 20
    expect(deadHolders(['h/10', 'h/20', 'h/30', 'other/10'], 'h', 30, alive)).toEqual(['h/10'])
  })
})

describe('csvField', () => {
  it.each([
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    [null, ''],
    [12, '12'],
  ])('%s → %s', (v, want) => {
    expect(csvField(v)).toBe(want)
  })
})

describe("planning a message's files", () => {
  const message = {
    id: '1',
    senderId: 'u',
    receiverType: 'user',
    receiverId: 'v',
    sentAt: 0,
    attachments: [
      { url: A, name: 'a.png', size: 10, source: { reader: 'mattermost', ref: 'data/a.png', host: 'local' } },
      { url: B, name: 'b.pdf' },
    ],
  } as const
  const item = JSON.parse(payload([A, B], 'hi')) as MessageImport
  it('takes the connector locator when the record has one, else the URL over HTTP', () => {
    expect(filesOfMessage(message as never, item)).toEqual([
      { locator: { reader: 'mattermost', ref: 'data/a.png', host: 'local' }, url: A, name: 'a.png', size: 10, type: 'image/png' },
      { locator: httpLocator(B), url: B, name: 'b.pdf', type: 'image/png' },
    ])
    expect(httpLocator('not a url')).toEqual({ reader: 'http', ref: 'not a url', host: 'invalid-url' })
  })
  it('omit: no attachment, a text message (naming the files when it had no text)', () => {
    expect(omitAttachments(item)).toMatchObject({ omitted: 2, payload: { type: 'text', data: { text: 'hi' } } })
    const bare = JSON.parse(payload([A])) as MessageImport
    expect(omitAttachments(bare).payload).toMatchObject({ type: 'text', data: { text: '[file not migrated: a.png]' } })
  })
})
