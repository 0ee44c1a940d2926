/** Table tests of the Zulip connector's pure decoders: mentions, reactions, edit history, group ids, stream names. */
import { describe, expect, it } from 'vitest'

import { FieldProblem } from '../../../../connectors/sql/decode.ts'
import { summariseEditHistory } from '../../../../connectors/zulip/entities/edit-history.ts'
import { decodeGroup, groupIdOf } from '../../../../connectors/zulip/entities/groups.ts'
import { parseMentions, resolveMentions } from '../../../../connectors/zulip/entities/mentions.ts'
import { reactionEmoji } from '../../../../connectors/zulip/entities/messages.ts'

describe('Zulip mentions', () => {
  const names = new Map<string, string[]>([
    ['bob baker', ['11']],
    ['alice archer', ['10', '18']],
  ])
  it.each([
    { text: 'hi @**Bob Baker**', ids: ['11'], handles: { '**bob baker**': '11' }, wild: [] },
    { text: 'hi @**Alice Archer**', ids: [], handles: {}, wild: [] },
    {
      text: 'hi @**Alice Archer|18** and @_**Bob Baker|11**',
      ids: ['18', '11'],
      handles: { '**alice archer|18**': '18', '_**bob baker|11**': '11' },
      wild: [],
    },
    { text: '@**all** @**Topic** @*design team*', ids: [], handles: {}, wild: ['all', 'topic'] },
    { text: 'mail bob@**Bob Baker** or `@**Nobody**`', ids: [], handles: {}, wild: [] },
    { text: '(@**Bob Baker**)', ids: ['11'], handles: { '**bob baker**': '11' }, wild: [] },
    { text: '@**Bob Baker** twice @**Bob Baker**', ids: ['11'], handles: { '**bob baker**': '11' }, wild: [] },
  ])('$text', ({ text, ids, handles, wild }) => {
    const parsed = parseMentions(text)
    expect(parsed.wildcards).toEqual(wild)
    expect(resolveMentions(parsed, names)).toEqual({ ids, handles })
  })
})

describe('Zulip reaction emoji', () => {
  it.each([
    ['+1', 'unicode_emoji', '1f44d', '👍'],
    ['flag_us', 'unicode_emoji', '1f1fa-1f1f8', '🇺🇸'],
    ['zulip', 'zulip_extra_emoji', 'zulip', 'zulip'],
    ['party_parrot', 'realm_emoji', '7', 'party_parrot'],
    ['broken', 'unicode_emoji', 'zzz', 'broken'],
    ['surrogate', 'unicode_emoji', 'd800', 'surrogate'],
    ['too_big', 'unicode_emoji', '110000', 'too_big'],
  ])('%s (%s %s) → %s', (name, type, code, want) => {
    expect(reactionEmoji(name, type, code)).toBe(want)
  })
})

describe('Zulip edit history', () => {
  it.each([
    { value: null, want: {} },
    { value: '[]', want: {} },
    {
      value: JSON.stringify([
        { user_id: 1, timestamp: 100, prev_topic: 'a', topic: 'b' },
        { user_id: null, timestamp: 200.5, prev_content: 'x' },
        { timestamp: 150, prev_subject: 'old', prev_stream: 3, stream: 4 },
      ]),
      want: { lastAt: 200_500, metadata: { edits: 3, contentEdits: 1, previousTopics: ['a', 'old'], previousStreamIds: [3] } },
    },
  ])('$value', ({ value, want }) => {
    expect(summariseEditHistory(value, false)).toEqual(want)
  })
  it.each(['[{"timestamp": 1', '{"timestamp": 1}', '[1]', '[{"prev_content": "x"}]', '[{"timestamp": -1}]'])('refuses %s', (value) => {
    expect(() => summariseEditHistory(value, false)).toThrow(FieldProblem)
  })
})

describe('Zulip groups', () => {
  it.each([
    [0, 7, '', '7'],
    [1, 7, '', 'dm-7'],
    [2, 7, 'design review', '7/design review'],
    [2, 7, '', '7/'],
  ])('kind %s id %s topic %j → %s', (kind, id, topic, want) => {
    expect(groupIdOf(kind, id, topic)).toBe(want)
  })
  const stream = { kind: 0, gid: 3, topic_key: '', invite_only: true, deactivated: true, date_created: '2024-01-01 00:00:00+00' }
  it.each([
    ['!DEACTIVATED:news', true, 'news'],
    ['!!DEACTIVATED:news', true, 'news'],
    ['3f9a0c1!DEACTIVATED:news', true, 'news'],
    ['news', true, 'news'],
    ['!DEACTIVATED:news', false, '!DEACTIVATED:news'],
  ])('stream %j (deactivated %s) is named %j', (name, deactivated, want) => {
    expect(decodeGroup({ ...stream, name, deactivated }, false).name).toBe(want)
  })
  it('a topic group is named "<stream> > <topic>", the empty topic "general chat"', () => {
    const topic = { ...stream, kind: 2, deactivated: false, name: 'general', topic_key: '', topic: '' }
    expect(decodeGroup(topic, false)).toMatchObject({
      id: '3/',
      name: 'general > general chat',
      metadata: { zulipType: 'topic', stream: 'general', topic: '' },
    })
  })
})
