/**
 * The Sendbird connector's pure parts, as tables: its settings (exactly one of export/api, the
 * transport rule, every problem at once), the CSV reader of the Data Export (quotes, delimiters,
 * line breaks, a record over the cap, a file cut inside quotes), CSV cells to objects, Sendbird's
 * two time units, and which channels are one-to-one conversations.
 */
import { describe, expect, it } from 'vitest'

import { SendbirdConfigSchema } from '../../../../connectors/sendbird/config.ts'
import { channelShape } from '../../../../connectors/sendbird/entities/channels.ts'
import { csvObject, csvRecords } from '../../../../connectors/sendbird/export/csv.ts'
import { FieldProblem, time } from '../../../../connectors/sendbird/fields.ts'

const records = async (text: string, delimiter = ',', max = 1000) => {
  const out = []
  for await (const r of csvRecords([Buffer.from(text)], delimiter, max)) {
    out.push('error' in r ? { index: r.index, error: r.error } : r.cells)
  }
  return out
}

describe('sendbird settings', () => {
  const api = { appId: 'APP-1', apiToken: 't0ken' }
  const exp = { users: 'u.zip', channels: 'c.zip', messages: ['m1.zip', 'm2.zip'] }
  it.each([
    ['both', { export: exp, api }, 'set exactly one of source.export'],
    ['neither', {}, 'set exactly one of source.export'],
    ['plain http elsewhere', { api: { ...api, baseUrl: 'http://sendbird.example' } }, 'api.baseUrl must be https://'],
    ['empty token', { api: { ...api, apiToken: '' } }, 'SENDBIRD_API_TOKEN'],
    ['rate above the top plan', { api: { ...api, requestsPerSecond: 1000 } }, ''],
    ['a two-character delimiter', { export: { ...exp, csvDelimiter: ';;' } }, 'one character'],
  ])('refuses %s', (_, o, message) => {
    const r = SendbirdConfigSchema.safeParse({ connector: 'sendbird', ...o })
    expect(r.success).toBe(false)
    expect(JSON.stringify(r.error?.issues)).toContain(message)
  })
  it('accepts an export (one path or a list) and the API with loopback http', () => {
    expect(SendbirdConfigSchema.parse({ connector: 'sendbird', export: exp }).export?.users).toEqual(['u.zip'])
    const a = SendbirdConfigSchema.parse({ connector: 'sendbird', api: { ...api, baseUrl: 'http://127.0.0.1:4000' } }).api
    expect(a).toMatchObject({ requestsPerSecond: 10, retries: 8 })
  })
})

describe('csvRecords', () => {
  it.each([
    [
      'plain',
      'a,b\r\n1,2\r\n',
      [
        ['a', 'b'],
        ['1', '2'],
      ],
    ],
    [
      'quoted delimiter, doubled quote, line break in a cell',
      'a,b\n"x,y","say ""hi""\nthere"\n',
      [
        ['a', 'b'],
        ['x,y', 'say "hi"\nthere'],
      ],
    ],
    ['blank lines skipped, last line without a break', 'a\n\n1\n2', [['a'], ['1'], ['2']]],
    [
      'empty cells',
      'a,b,c\n,,\n',
      [
        ['a', 'b', 'c'],
        ['', '', ''],
      ],
    ],
  ])('%s', async (_, text, want) => {
    expect(await records(text)).toEqual(want)
  })
  it("reads the export's csv_delimiter (; | tab)", async () => {
    expect(await records('a;b\n1;"2;3"\n', ';')).toEqual([
      ['a', 'b'],
      ['1', '2;3'],
    ])
    expect(await records('a\tb\n1\t2\n', '\t')).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ])
  })
  it('a record over the cap is one problem and the file reads on', async () => {
    expect(await records(`a\n${'x'.repeat(50)}\nok\n`, ',', 20)).toEqual([['a'], { index: 1, error: 'record 1 is over 20 bytes' }, ['ok']])
  })
  it('a file cut inside a quoted cell ends with a problem', async () => {
    expect(await records('a\n"open\n')).toEqual([['a'], { index: 1, error: 'record 1 ends inside a quoted cell (the file is cut short)' }])
  })
  it('splits a UTF-8 character across chunks without damage', async () => {
    const bytes = Buffer.from('a\nSchön 👍\n')
    const out = []
    for await (const r of csvRecords([bytes.subarray(0, 6), bytes.subarray(6, 9), bytes.subarray(9)], ',', 100)) {
      out.push('cells' in r ? r.cells : r.error)
    }
    expect(out).toEqual([['a'], ['Schön 👍']])
  })
})

describe('csvObject', () => {
  it('dotted columns nest, JSON cells parse, empty cells are absent', () => {
    expect(
      csvObject(
        ['message_id', 'user.user_id', 'user.nickname', 'reactions', 'data', 'message'],
        ['7', 'bob', '', '[{"key":"x","user_ids":["a"]}]', '{"a":1}', '[not json'],
      ),
    ).toEqual({
      message_id: '7',
      user: { user_id: 'bob' },
      reactions: [{ key: 'x', user_ids: ['a'] }],
      data: { a: 1 },
      message: '[not json',
    })
  })
})

describe('time', () => {
  it.each([
    [1_704_189_600, 1_704_189_600_000],
    [1_704_189_600_123, 1_704_189_600_123],
    ['1704189600', 1_704_189_600_000],
    [0, undefined],
    [undefined, undefined],
  ])('%s → %s', (v, want) => {
    expect(time('created_at', v)).toBe(want)
  })
  it('refuses what is not a time, naming the field', () => {
    expect(() => time('created_at', 'soon')).toThrow(FieldProblem)
    expect(() => time('created_at', -5)).toThrow('created_at is not a time')
  })
})

describe('channelShape: which channels are one-to-one conversations', () => {
  const two = [{ user_id: 'a' }, { user_id: 'b' }]
  it.each([
    ['private, two members', { members: two, member_count: 2 }, ['a', 'b']],
    ['distinct, two members', { members: two, member_count: 2, is_distinct: true }, ['a', 'b']],
    ['public', { members: two, member_count: 2, is_public: true }, undefined],
    ['Supergroup', { members: two, member_count: 2, is_super: true }, undefined],
    ['broadcast', { members: two, member_count: 2, is_broadcast: true }, undefined],
    ['three members', { members: [...two, { user_id: 'c' }], member_count: 3 }, undefined],
    ['two counted, members not listed', { member_count: 2 }, undefined],
    ['open channel', { channel_type: 'open', participant_count: 2, operators: two }, undefined],
  ])('%s', (_, o, direct) => {
    expect(channelShape({ channel_url: 'c', ...o }).direct).toEqual(direct)
  })
  it('a channel without a URL is a problem on channel_url', () => {
    expect(() => channelShape({ name: 'x' })).toThrow('channel_url is missing')
  })
})
