/**
 * Table tests of the chat-write request schemas (what the client refuses before sending) and of
 * the answer helpers.
 */
import { describe, expect, it } from 'vitest'

import { chatBudgetKey } from '../../../src/load/chat-budget.ts'
import {
  actedOnMessage,
  AddMembersRequest,
  ChangeScopeRequest,
  DeleteMessageRequest,
  GroupUpdate,
  MessageUpdate,
  ReactivateUsersAnswer,
  UserUpdate,
} from '../../../src/target/chat-write-schemas.ts'
import { ChatMessage } from '../../../src/target/schemas.ts'

type Case = {
  name: string
  schema: { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }
  body: unknown
  problem?: RegExp
}

const uids = (n: number) => Array.from({ length: n }, (_, i) => `u${i}`)

const cases: Case[] = [
  { name: 'user: a rename', schema: UserUpdate, body: { name: 'Alice' } },
  { name: 'user: unset avatar and metadata', schema: UserUpdate, body: { unset: ['avatar', 'metadata'] } },
  { name: 'user: nothing to change', schema: UserUpdate, body: {}, problem: /changes nothing/ },
  {
    name: 'user: set and unset avatar',
    schema: UserUpdate,
    body: { avatar: 'https://a.example/x', unset: ['avatar'] },
    problem: /both set and unset/,
  },
  { name: 'user: unset name (not unsettable)', schema: UserUpdate, body: { unset: ['name'] }, problem: /unset/ },
  { name: 'user: uid is not a field of the body', schema: UserUpdate, body: { uid: 'x', name: 'X' }, problem: /uid|Unrecognized/i },
  { name: 'user: metadata over 5 KB', schema: UserUpdate, body: { metadata: { x: 'y'.repeat(5200) } }, problem: /5120 bytes/ },
  { name: 'user: 26 tags', schema: UserUpdate, body: { tags: uids(26) }, problem: /tags/ },
  { name: 'user: a role that is no id', schema: UserUpdate, body: { role: 'Big Boss' }, problem: /role|alpha-dash/ },
  { name: 'group: made private', schema: GroupUpdate, body: { name: 'G', type: 'private' } },
  { name: 'group: made a password group with its password', schema: GroupUpdate, body: { type: 'password', password: 'pw' } },
  { name: 'group: password type without a password', schema: GroupUpdate, body: { type: 'password' }, problem: /ERR_EMPTY_GROUP_PASS/ },
  { name: 'group: a password on a public group', schema: GroupUpdate, body: { type: 'public', password: 'pw' }, problem: /no password/ },
  { name: 'group: description of 256 characters', schema: GroupUpdate, body: { description: 'd'.repeat(256) }, problem: /description|255/ },
  { name: 'group: unset description', schema: GroupUpdate, body: { unset: ['description'] } },
  { name: 'members: 25 participants', schema: AddMembersRequest, body: { participants: uids(25) } },
  {
    name: 'members: 26 over the lists',
    schema: AddMembersRequest,
    body: { admins: uids(1), participants: uids(26).slice(1) },
    problem: /at most 25/,
  },
  { name: 'members: none', schema: AddMembersRequest, body: {}, problem: /no uid/ },
  { name: 'members: a uid twice', schema: AddMembersRequest, body: { admins: ['a'], participants: ['a'] }, problem: /twice/ },
  { name: 'members: an uppercase uid', schema: AddMembersRequest, body: { participants: ['Bob'] }, problem: /alpha-dash/ },
  { name: 'scope: moderator', schema: ChangeScopeRequest, body: { scope: 'moderator' } },
  { name: 'scope: owner is no scope', schema: ChangeScopeRequest, body: { scope: 'owner' }, problem: /scope/ },
  { name: 'message: new text', schema: MessageUpdate, body: { data: { text: 'edited' } } },
  { name: 'message: tags only', schema: MessageUpdate, body: { tags: ['t'] } },
  { name: 'message: attachments cannot be edited', schema: MessageUpdate, body: { data: { attachments: [] } }, problem: /attachments|Unrecognized/i },
  { name: 'message: nothing to change', schema: MessageUpdate, body: { data: {} }, problem: /changes nothing/ },
  { name: 'message: data over 10 KB', schema: MessageUpdate, body: { data: { text: 'x'.repeat(10_300) } }, problem: /10240 bytes/ },
  { name: 'delete: soft', schema: DeleteMessageRequest, body: { permanent: false } },
  { name: 'delete: permanent must be a boolean', schema: DeleteMessageRequest, body: { permanent: 'yes' }, problem: /permanent|boolean/ },
]

describe('chat-write request schemas', () => {
  it.each(cases)('$name', ({ schema, body, problem }) => {
    const r = schema.safeParse(body)
    if (problem === undefined) {
      expect(r.error?.issues).toBeUndefined()
      expect(r.success).toBe(true)
      return
    }
    expect(r.success).toBe(false)
    const text = (r.error?.issues ?? []).map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')
    expect(text).toMatch(problem)
  })
})

describe('answers', () => {
  it('actedOnMessage reads data.entities.on.entity of an action message', () => {
    const on = { id: '69', sender: 'a', receiverType: 'user', receiver: 'b', sentAt: 1, editedAt: 2, editedBy: 'a', data: { text: 't' } }
    const action = ChatMessage.parse({
      id: '402',
      sender: 'a',
      receiverType: 'user',
      receiver: 'b',
      sentAt: 3,
      category: 'action',
      data: { action: 'edited', entities: { on: { entity: on, entityType: 'message' } } },
    })
    expect(actedOnMessage(action)).toMatchObject({ id: '69', editedAt: 2, editedBy: 'a' })
    expect(actedOnMessage(ChatMessage.parse({ ...action, data: {} }))).toBeUndefined()
  })

  it('the reactivation answer is read under the documented example name and the plain one', () => {
    expect(ReactivateUsersAnswer.parse({ data: { nonDeactivatedUids: ['a'] } }).data.nonDeactivatedUids).toEqual(['a'])
    expect(ReactivateUsersAnswer.parse({ data: { reactivatedUids: ['b'] } }).data.reactivatedUids).toEqual(['b'])
  })

  it('the chat budget row is the app id with #chat', () => {
    expect(chatBudgetKey('acme')).toBe('acme#chat')
  })
})
