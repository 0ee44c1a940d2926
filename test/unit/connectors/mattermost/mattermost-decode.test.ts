import { describe, expect, it } from 'vitest'

import { renderGroupName } from '../../../../connectors/mattermost/entities/groups.ts'
import { integrationText } from '../../../../connectors/mattermost/entities/integration-text.ts'
import { parseMentions, resolveMentions } from '../../../../connectors/mattermost/entities/mentions.ts'
import { decodeMessage, directReceiver, fileUrl, typeOfAttachments } from '../../../../connectors/mattermost/entities/messages.ts'
import { FieldProblem } from '../../../../connectors/sql/decode.ts'

describe('mentions', () => {
  const users = new Map([
    ['alice', 'u1'],
    ['bob.smith', 'u2'],
    ['eve', 'u3'],
    ['carol:remote1', 'u4'],
    ['dan~2:remote1', 'u5'],
  ])
  it.each([
    { text: 'hi @alice', ids: ['u1'], handles: { alice: 'u1' }, channel: [] },
    { text: '@alice, @alice and @ALICE', ids: ['u1'], handles: { alice: 'u1' }, channel: [] },
    { text: 'thanks @eve.', ids: ['u3'], handles: { eve: 'u3' }, channel: [] },
    { text: 'ping @bob.smith.', ids: ['u2'], handles: { 'bob.smith': 'u2' }, channel: [] },
    { text: 'mail alice@example.com', ids: [], handles: {}, channel: [] },
    { text: '@channel @here @all!', ids: [], handles: {}, channel: ['channel', 'here', 'all'] },
    { text: '@nobody', ids: [], handles: {}, channel: [] },
    // Shared channels: a remote cluster's user is `name:remote` (with `~n` on a collision).
    { text: 'cc @carol:remote1.', ids: ['u4'], handles: { 'carol:remote1': 'u4' }, channel: [] },
    { text: '@dan~2:remote1 and @alice: hi', ids: ['u5', 'u1'], handles: { 'dan~2:remote1': 'u5', alice: 'u1' }, channel: [] },
    { text: '@alice:elsewhere', ids: [], handles: {}, channel: [] },
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

describe('integration posts (props.attachments)', () => {
  it.each([
    {
      name: 'Jira-like: pretext, linked title, fields',
      attachments: [
        {
          fallback: 'Ann created PROJ-7',
          color: '#0052cc',
          pretext: 'Ann created a ticket',
          title: 'PROJ-7 Fix login',
          title_link: 'https://jira.example.com/browse/PROJ-7',
          fields: [
            { title: 'Priority', value: 'High', short: true },
            { title: 'Points', value: 3, short: true },
          ],
        },
      ],
      text: 'Ann created a ticket\nPROJ-7 Fix login (https://jira.example.com/browse/PROJ-7)\nPriority: High\nPoints: 3',
      leftover: [{ fallback: 'Ann created PROJ-7', color: '#0052cc' }],
    },
    {
      name: 'only a fallback: the fallback is the text',
      attachments: [{ fallback: 'Alert firing: disk full', color: 'danger', image_url: '' }],
      text: 'Alert firing: disk full',
      leftover: [{ color: 'danger' }],
    },
    {
      name: 'two attachments, blank line between; author and footer',
      attachments: [
        { author_name: 'gitlab', text: 'pushed 2 commits', footer: 'repo/x' },
        { text: 'pipeline passed', actions: [{ name: 'Retry' }] },
      ],
      text: 'gitlab\npushed 2 commits\nrepo/x\n\npipeline passed',
      leftover: [{}, { actions: [{ name: 'Retry' }] }],
    },
    { name: 'not an array', attachments: 'x', text: '', leftover: undefined },
    { name: 'nothing readable', attachments: [{ color: 'good' }], text: '', leftover: [{ color: 'good' }] },
  ])('$name', ({ attachments, text, leftover }) => {
    const r = integrationText(attachments)
    expect(r.text).toBe(text)
    expect(r.leftover).toEqual(leftover)
  })

  const row = (o: Record<string, unknown>) => ({
    id: 'p1',
    userid: 'u1',
    channelid: 'c1',
    createat: 1_700_000_000_000,
    message: '',
    post_type: '',
    ...o,
  })
  const ctx = { lossy: false, fileBaseUrl: 'file:///d', usernames: new Map([['ann', 'u9']]), channels: new Map([['c1', { type: 'O' }]]) }

  it('an empty message with attachments becomes their text; what was not rendered stays in props', () => {
    const props = { from_webhook: 'true', attachments: [{ text: 'Build #9 failed for @ann', color: 'danger' }] }
    const m = decodeMessage(row({ props: JSON.stringify(props) }), ctx)
    expect(m.text).toBe('Build #9 failed for @ann')
    expect(m.mentions).toEqual(['u9'])
    expect(m.metadata).toEqual({ props: { from_webhook: 'true', attachments: [{ color: 'danger' }] }, attachmentsAsText: 1 })
  })

  it('a message with attachments keeps its text first', () => {
    const m = decodeMessage(row({ message: 'Deploy', props: { attachments: [{ title: 'prod', text: 'ok' }] } }), ctx)
    expect(m.text).toBe('Deploy\n\nprod\nok')
    expect(m.metadata).toEqual({ attachmentsAsText: 1 })
  })
})
