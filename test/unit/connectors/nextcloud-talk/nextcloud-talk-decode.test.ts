import { describe, expect, it } from 'vitest'

import { actorId } from '../../../../connectors/nextcloud-talk/entities/decode-helpers.ts'
import { decodeMessage, mentionTokens, oneToOneReceiver } from '../../../../connectors/nextcloud-talk/entities/messages.ts'
import { decodeSystemMessage } from '../../../../connectors/nextcloud-talk/entities/system-messages.ts'
import { datetimeBound, roomTypes } from '../../../../connectors/nextcloud-talk/sql/queries.ts'
import { FieldProblem } from '../../../../connectors/sql/decode.ts'

describe('mentions as Talk writes them', () => {
  it.each([
    { text: 'hi @alice', tokens: [{ id: 'alice', quoted: false }] },
    {
      text: 'hi @"Frank M" and @bob.',
      tokens: [
        { id: 'Frank M', quoted: true },
        { id: 'bob', quoted: false },
      ],
    },
    { text: 'mail alice@example.com', tokens: [] },
    { text: '@all please', tokens: [] },
    { text: '@"federated_user/zoe@other.example"', tokens: [{ id: 'federated_user/zoe@other.example', quoted: true }] },
    { text: 'no mention', tokens: [] },
  ])('$text', ({ text, tokens }) => {
    expect(mentionTokens(text)).toEqual(tokens)
  })
})

describe('one-to-one receivers (room name = JSON list of both uids)', () => {
  it.each([
    { name: '["alice","bob"]', sender: 'alice', receiver: 'bob' },
    { name: '["alice","bob"]', sender: 'bob', receiver: 'alice' },
    { name: '["bob","zed"]', sender: 'bob', receiver: 'zed' },
  ])('$name from $sender → $receiver', ({ name, sender, receiver }) => {
    expect(oneToOneReceiver(name, sender)).toBe(receiver)
  })
  it.each([
    { name: '["alice","bob"]', sender: 'carol', field: 'actor_id' },
    { name: 'Alice & Bob', sender: 'alice', field: 'talk_rooms.name' },
    { name: '["alice"]', sender: 'alice', field: 'talk_rooms.name' },
  ])('$name from $sender is a problem on $field', ({ name, sender, field }) => {
    expect(() => oneToOneReceiver(name, sender)).toThrow(FieldProblem)
    try {
      oneToOneReceiver(name, sender)
    } catch (err) {
      expect((err as FieldProblem).field).toBe(field)
    }
  })
})

describe('system messages', () => {
  it.each([
    { json: '{"message":"user_added","parameters":{"user":"bob"}}', kind: 'user_added', text: 'alice added bob', hidden: false },
    { json: '{"message":"message_edited","parameters":{"message":7}}', kind: 'message_edited', text: 'alice edited a message', hidden: true },
    {
      json: '{"message":"matterbridge_config_added","parameters":{}}',
      kind: 'matterbridge_config_added',
      text: 'matterbridge_config_added',
      hidden: false,
    },
  ])('$kind', ({ json, kind, text, hidden }) => {
    expect(decodeSystemMessage(json, 'alice', false)).toMatchObject({ kind, text, hidden })
  })
  it.each(['{"message": ', '{"parameters":{}}', '[]'])('%s is a problem on message', (json) => {
    expect(() => decodeSystemMessage(json, 'alice', false)).toThrow(FieldProblem)
  })
})

describe('small rules', () => {
  it.each([
    { type: 'users', id: 'alice', want: 'alice' },
    { type: 'guests', id: 'abc', want: 'guests/abc' },
    { type: 'bots', id: 'bot-1', want: 'bots/bot-1' },
  ])('actor $type/$id → $want', ({ type, id, want }) => {
    expect(actorId(type, id)).toBe(want)
  })
  it.each([
    { rooms: { changelog: 'skip', noteToSelf: 'skip' }, groups: [2, 3], messages: [1, 2, 3, 5] },
    { rooms: { changelog: 'group', noteToSelf: 'self' }, groups: [2, 3, 4], messages: [1, 2, 3, 4, 5, 6] },
  ] as const)('room types for $rooms', ({ rooms, groups, messages }) => {
    expect(roomTypes(rooms)).toEqual({ groups, messages })
  })
  it('a delta bound is floored to the second (MariaDB datetime)', () => {
    expect(datetimeBound(Date.UTC(2024, 0, 15, 9, 0, 1, 999))).toBe('2024-01-15 09:00:01')
  })
})

describe('a shared file with a caption (Talk 17.1+: metaData.caption)', () => {
  const lookups = { users: new Set<string>(), shares: new Map([['7', { fileId: '42', name: '/Photos/cat.jpg' }]]), reactions: new Map() }
  const row = (metaData: Record<string, unknown>) => ({
    id: 1,
    actor_type: 'users',
    actor_id: 'alice',
    verb: 'object_shared',
    message: JSON.stringify({ message: 'file_shared', parameters: { share: '7', metaData } }),
    created: 1700000000,
    object_id: '2',
    room_type: 2,
  })
  it.each([
    [{ mimeType: 'image/jpeg', messageType: 'comment' }, ''],
    [{ mimeType: 'image/jpeg', messageType: 'comment', caption: 'Our cat' }, 'Our cat'],
  ])('%j → text %j, the file attached', (metaData, text) => {
    const m = decodeMessage(row(metaData), { lossy: false, siteUrl: 'https://cloud.example.com', lookups })
    expect({ type: m.type, text: m.text, url: m.attachments?.[0]?.url }).toEqual({ type: 'image', text, url: 'https://cloud.example.com/f/42' })
  })
})

describe('as Talk and Nextcloud write them (issue 26)', () => {
  const lookups = { users: new Set<string>(), shares: new Map(), reactions: new Map() }
  const base = { id: 1, actor_type: 'users', actor_id: 'bob', message: 'hi', created: 1_700_000_000, object_id: '5', room_type: 2 }
  const decode = (o: Record<string, unknown>) => decodeMessage({ ...base, ...o }, { lossy: false, lookups })

  it.each(['[]', ' [] ', [] as unknown])('meta_data %j (PHP empty array) is no metadata, not a problem', (meta) => {
    expect(decode({ meta_data: meta })).toMatchObject({ text: 'hi', senderId: 'bob' })
  })
  it('meta_data that is a list of values is still a problem on meta_data', () => {
    expect(() => decode({ meta_data: '[1]' })).toThrow(FieldProblem)
  })
  it('system parameters [] read as none', () => {
    expect(decodeSystemMessage('{"message":"conversation_created","parameters":[]}', 'alice', false)).toMatchObject({
      kind: 'conversation_created',
      parameters: {},
    })
  })

  it.each([
    { name: 'the remaining user writes to the deleted one', actor: ['users', 'bob'], sender: 'bob', receiver: 'deleted_users/Zed Zulu' },
    {
      name: 'the deleted user writes to the remaining one',
      actor: ['deleted_users', 'deleted_users'],
      sender: 'deleted_users/Zed Zulu',
      receiver: 'bob',
    },
  ])('former one-to-one room renamed after its deleted user: $name', ({ actor, sender, receiver }) => {
    const m = decode({ room_type: 5, room_name: 'Zed Zulu', former_peer: 'bob', actor_type: actor[0], actor_id: actor[1] })
    expect(m).toMatchObject({ senderId: sender, receiverType: 'user', receiverId: receiver })
  })
  it("a former one-to-one room with no remaining user: the deleted user's message is a problem that says so", () => {
    try {
      decode({ room_type: 5, room_name: 'Zed Zulu', former_peer: null, actor_type: 'deleted_users', actor_id: 'deleted_users' })
      expect.unreachable()
    } catch (e) {
      expect((e as FieldProblem).field).toBe('object_id')
      expect((e as FieldProblem).message).toMatch(/no remaining user/)
    }
  })
})
