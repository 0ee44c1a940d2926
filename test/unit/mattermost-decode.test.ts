import { describe, expect, it } from 'vitest'

import { renderGroupName } from '../../connectors/mattermost/entities/groups.ts'
import { parseMentions, resolveMentions } from '../../connectors/mattermost/entities/mentions.ts'
import { directReceiver, fileUrl, typeOfAttachments } from '../../connectors/mattermost/entities/messages.ts'
import { FieldProblem } from '../../connectors/sql/decode.ts'

describe('mentions', () => {
  const users = new Map([
    ['alice', 'u1'],
    ['bob.smith', 'u2'],
    ['eve', 'u3'],
  ])
  it.each([
    { text: 'hi @alice', ids: ['u1'], handles: { alice: 'u1' }, channel: [] },
    { text: '@alice, @alice and @ALICE', ids: ['u1'], handles: { alice: 'u1' }, channel: [] },
    { text: 'thanks @eve.', ids: ['u3'], handles: { eve: 'u3' }, channel: [] },
    { text: 'ping @bob.smith.', ids: ['u2'], handles: { 'bob.smith': 'u2' }, channel: [] },
    { text: 'mail alice@example.com', ids: [], handles: {}, channel: [] },
    { text: '@channel @here @all!', ids: [], handles: {}, channel: ['channel', 'here', 'all'] },
    { text: '@nobody', ids: [], handles: {}, channel: [] },
  ])('$text', ({ text, ids, handles, channel }) => {
    const parsed = parseMentions(text)
    expect(parsed.channel).toEqual(channel)
    expect(resolveMentions(parsed, users)).toEqual({ ids, handles })
  })
})

describe('direct channels', () => {
  it.each([
    { name: 'a__b', sender: 'a', want: 'b' },
    { name: 'a__b', sender: 'b', want: 'a' },
    { name: 'a__a', sender: 'a', want: 'a' },
  ])('$name from $sender → $want', ({ name, sender, want }) => expect(directReceiver(name, sender)).toBe(want))
  it.each([
    { name: 'garbage', sender: 'a', field: 'channelid' },
    { name: 'a__b', sender: 'c', field: 'userid' },
    { name: '__b', sender: 'b', field: 'channelid' },
  ])('$name from $sender is a problem on $field', ({ name, sender, field }) => {
    expect(() => directReceiver(name, sender)).toThrow(FieldProblem)
    try {
      directReceiver(name, sender)
    } catch (e) {
      expect((e as FieldProblem).field).toBe(field)
    }
  })
})

describe('group names, attachment types, file URLs', () => {
  it.each([
    { rule: '{channel}', values: { team: 'eng', channel: 'Town Square' }, want: 'Town Square' },
    { rule: '{team}-{channel}', values: { team: 'eng', channel: 'Town Square' }, want: 'eng-Town Square' },
    { rule: '{team}-{channel}', values: { team: '', channel: 'Lonely' }, want: 'Lonely' },
    {
      rule: '{teamDisplayName} / {channelName}',
      values: { teamDisplayName: 'Engineering', channelName: 'town-square' },
      want: 'Engineering / town-square',
    },
  ])('$rule', ({ rule, values, want }) => expect(renderGroupName(rule, values as unknown as Record<string, string>)).toBe(want))

  it.each([
    { mimes: [], want: 'text' },
    { mimes: ['image/png', 'image/jpeg'], want: 'image' },
    { mimes: ['video/mp4'], want: 'video' },
    { mimes: ['audio/ogg'], want: 'audio' },
    { mimes: ['image/png', 'application/pdf'], want: 'file' },
    { mimes: [undefined], want: 'file' },
  ])('$mimes → $want', ({ mimes, want }) =>
    expect(typeOfAttachments(mimes.map((m) => ({ url: 'u', name: 'n', ...(m ? { mimeType: m } : {}) })))).toBe(want),
  )

  it('encodes path segments', () => {
    expect(fileUrl('https://f.example.com/data', '/2024/a b/ü.png')).toBe('https://f.example.com/data/2024/a%20b/%C3%BC.png')
  })
})
