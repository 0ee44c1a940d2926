/**
 * `changeIntents`: every kind of change of a loaded item, table by table — what the platform has
 * (`before`) against the new payload or skip (`after`), under the `changes:` policies.
 */
import { describe, expect, it } from 'vitest'

import type { LegacyEntity } from '../../../src/model/index.ts'
import { advancesPayload, changeIntents, type ChangePolicies, type NowSkipped, type Payload } from '../../../src/plan/change-intents.ts'
import { ChangesSchema, vanishedAllowed } from '../../../src/plan/changes-config.ts'
import { GroupUpdate, MessageUpdate, UserUpdate } from '../../../src/target/chat-write-schemas.ts'

const policies = (changes: Record<string, unknown> = {}, deletesMode: 'skip' | 'tombstone' = 'skip'): ChangePolicies => ({
  changes: ChangesSchema.parse(changes),
  deletesMode,
  metadataKey: 'legacy',
})

const user: Payload = { uid: 'u1', name: 'Ann', avatar: 'https://x/a.png', createdAt: 1_700_000_000, metadata: { legacy: { id: '1' } } }
const group: Payload = { guid: 'g1', name: 'General', type: 'public', icon: 'https://x/i.png', createdAt: 1_700_000_000 }
const member: Payload = { memberId: 'g1_member_u1', guid: 'g1', uid: 'u1', scope: 'participant', joinedAt: 1_700_000_000 }
const message: Payload = {
  muid: 'm1',
  sender: 'u1',
  receiverType: 'group',
  receiver: 'g1',
  sentAt: 1_700_000_000,
  data: { text: 'hello', metadata: { legacy: { id: 'm1' } } },
}
const tombstone: Payload = { ...message, data: { text: 'This message was deleted.', metadata: { legacy: { id: 'm1', deletedAt: 1_700_000_100 } } } }

/** kind, policy and a part of the reason, per intent. */
type Row = [LegacyEntity, string, Payload | null, Payload | NowSkipped, ChangePolicies, [string, string, RegExp][]]

const rows: Row[] = [
  ['users', 'unchanged payload: nothing', user, { ...user }, policies(), []],
  ['users', 'renamed', user, { ...user, name: 'Anne' }, policies(), [['user.update', 'apply', /changed: name/]]],
  ['users', 'avatar cleared: unset', user, { ...user, avatar: undefined }, policies(), [['user.update', 'apply', /changed: avatar/]]],
  [
    'users',
    'profile changed, report policy',
    user,
    { ...user, metadata: { legacy: { id: '1' }, team: 'x' } },
    policies({ users: 'report' }),
    [['user.update', 'report', /metadata/]],
  ],
  [
    'users',
    'deactivated (kept with deactivatedAt)',
    user,
    { ...user, deactivatedAt: 1_700_000_500 },
    policies(),
    [['user.deactivate', 'apply', /deactivated in the source/]],
  ],
  ['users', 'reactivated', { ...user, deactivatedAt: 1 }, user, policies(), [['user.reactivate', 'apply', /reactivated/]]],
  [
    'users',
    'deactivated under deactivatedUsers: skip',
    user,
    { skipped: 'policy:deactivatedUsers: deactivated user' },
    policies(),
    [['user.deactivate', 'apply', /deactivatedUsers: skip/]],
  ],
  [
    'users',
    'back after it vanished',
    null,
    user,
    policies(),
    [
      ['user.reactivate', 'apply', /back in the source/],
      ['user.update', 'apply', /back in the source/],
    ],
  ],
  [
    'users',
    'createdAt moved: reported, with the reason',
    user,
    { ...user, createdAt: 1_600_000_000 },
    policies(),
    [['user.unchangeable', 'report', /createdAt \(the platform keeps the creation time/]],
  ],
  [
    'users',
    'ignored policy: the unchangeable part is ignored too',
    user,
    { ...user, name: 'B', createdAt: 5 },
    policies({ users: 'ignore' }),
    [
      ['user.update', 'ignore', /name/],
      ['user.unchangeable', 'ignore', /createdAt/],
    ],
  ],
  ['groups', 'renamed', group, { ...group, name: 'All' }, policies(), [['group.update', 'apply', /changed: name/]]],
  ['groups', 'made private', group, { ...group, type: 'private' }, policies(), [['group.update', 'apply', /changed: type/]]],
  ['groups', 'new icon', group, { ...group, icon: 'https://x/j.png' }, policies(), [['group.update', 'apply', /changed: icon/]]],
  ['groups', 'icon cleared: unset', group, { ...group, icon: undefined }, policies(), [['group.update', 'apply', /changed: icon/]]],
  [
    'groups',
    'owner cleared: the update cannot clear it',
    { ...group, owner: 'u1' },
    group,
    policies(),
    [['group.unchangeable', 'report', /owner cleared/]],
  ],
  [
    'users',
    'role cleared: the update cannot clear it',
    { ...user, role: 'admin' },
    user,
    policies(),
    [['user.unchangeable', 'report', /role cleared/]],
  ],
  [
    'groups',
    'archived and skipped now',
    group,
    { skipped: 'policy:archivedGroups: archived group' },
    policies(),
    [['group.unchangeable', 'report', /keeps the group/]],
  ],
  ['groups', 'deleted when it vanished, back now', null, group, policies(), [['group.unchangeable', 'report', /cannot create it again/]]],
  ['members', 'promoted', member, { ...member, scope: 'admin' }, policies(), [['member.scope', 'apply', /participant → admin/]]],
  ['members', 'banned', member, { ...member, isBanned: true }, policies(), [['member.ban', 'apply', /banned in the source/]]],
  [
    'members',
    'unbanned: unban and add again',
    { ...member, isBanned: true },
    member,
    policies(),
    [
      ['member.unban', 'apply', /unbanned/],
      ['member.add', 'apply', /a member again/],
    ],
  ],
  ['members', 're-added after it was removed', null, { ...member, scope: 'moderator' }, policies(), [['member.add', 'apply', /back in the source/]]],
  [
    'members',
    'banned under bans: skip: kicked',
    member,
    { skipped: 'policy:bans: banned member (bans: skip)' },
    policies(),
    [['member.kick', 'apply', /bans: skip/]],
  ],
  ['members', 'joinedAt moved', member, { ...member, joinedAt: 1_600_000_000 }, policies(), [['member.unchangeable', 'report', /joinedAt/]]],
  ['members', 'report policy', member, { ...member, scope: 'admin' }, policies({ members: 'report' }), [['member.scope', 'report', /scope/]]],
  [
    'messages',
    'text edited',
    message,
    { ...message, data: { text: 'hello!', metadata: { legacy: { id: 'm1', editedAt: 5 } } } },
    policies(),
    [['message.edit', 'apply', /data\.text/]],
  ],
  [
    'messages',
    'edited under edits: report',
    message,
    { ...message, data: { text: 'x', metadata: { legacy: { id: 'm1' } } } },
    policies({ edits: 'report' }),
    [['message.edit', 'report', /data\.text/]],
  ],
  [
    'messages',
    'soft-deleted under deletes.mode: skip',
    message,
    { skipped: 'policy:deletes: deleted message (deletes.mode: skip)' },
    policies(),
    [['message.delete', 'apply', /deletes.mode: skip/]],
  ],
  [
    'messages',
    'soft-deleted under deletes.mode: tombstone',
    message,
    tombstone,
    policies({}, 'tombstone'),
    [['message.edit', 'apply', /deletes.mode: tombstone/]],
  ],
  [
    'messages',
    'soft-deleted, deletions: ignore',
    message,
    { skipped: 'policy:deletes: deleted message' },
    policies({ deletions: 'ignore' }),
    [['message.delete', 'ignore', /deleted/]],
  ],
  [
    'messages',
    'sentAt moved: reported, not edited',
    message,
    { ...message, sentAt: 1_700_000_009 },
    policies(),
    [['message.unchangeable', 'report', /sentAt \(a message keeps its sent time\)/]],
  ],
  [
    'messages',
    'moved to another conversation',
    message,
    { ...message, receiver: 'g2' },
    policies(),
    [['message.unchangeable', 'report', /receiver/]],
  ],
  [
    'messages',
    'skipped now by another policy',
    message,
    { skipped: 'policy:systemMessages: system message' },
    policies(),
    [['message.unchangeable', 'report', /now skipped/]],
  ],
  ['messages', 'deleted on the platform, back in the source', null, message, policies(), [['message.unchangeable', 'report', /cannot be restored/]]],
  [
    'messages',
    'attachment replaced: the update takes only text and metadata',
    { ...message, data: { text: 'x', attachments: [{ url: 'https://x/1' }] } },
    { ...message, data: { text: 'x', attachments: [{ url: 'https://x/2' }] } },
    policies(),
    [['message.unchangeable', 'report', /data\.attachments \(a message update takes only/]],
  ],
  [
    'messages',
    'text edited and an attachment added: edit the text, report the attachment',
    message,
    { ...message, data: { text: 'hi', metadata: { legacy: { id: 'm1' } }, attachments: [{ url: 'https://x/1' }] } },
    policies(),
    [
      ['message.edit', 'apply', /data\.text/],
      ['message.unchangeable', 'report', /data\.attachments/],
    ],
  ],
  ['messages', 'sender details only: nothing', message, { ...message, senderUserDetails: { uid: 'u1', name: 'New name' } }, policies(), []],
]

describe('changeIntents', () => {
  it.each(rows)('%s: %s', (entity, _title, before, after, p, expected) => {
    const got = changeIntents(entity, before, after, p)
    expect(got.map((i) => [i.kind, i.policy])).toEqual(expected.map(([k, pol]) => [k, pol]))
    got.forEach((intent, n) => expect(intent.reason).toMatch((expected[n] as [string, string, RegExp])[2]))
  })

  it('bodies carry the desired state the call sends', () => {
    expect(changeIntents('users', user, { ...user, name: 'Anne', avatar: undefined }, policies())[0]?.body).toEqual({
      name: 'Anne',
      metadata: { legacy: { id: '1' } },
      unset: ['avatar'],
    })
    const priv = { ...group, type: 'password', password: 'secret' }
    expect(changeIntents('groups', group, priv, policies())[0]?.body).toEqual({
      name: 'General',
      type: 'password',
      icon: 'https://x/i.png',
      password: 'secret',
    })
    expect(changeIntents('members', member, { ...member, scope: 'admin' }, policies())[0]?.body).toEqual({ scope: 'admin' })
    const edited = { ...message, data: { text: 'hello!' } }
    expect(changeIntents('messages', message, edited, policies())[0]?.body).toEqual({ sender: 'u1', data: { text: 'hello!' } })
    expect(changeIntents('messages', message, { skipped: 'policy:deletes: x' }, policies())[0]?.body).toEqual({ sender: 'u1' })
    expect(changeIntents('messages', message, tombstone, policies({}, 'tombstone'))[0]?.body).toEqual({ sender: 'u1', data: tombstone.data })
  })

  it('every applied body is what the chat client takes (its request schemas), a message edit without its sender', () => {
    const checks: Record<string, (body: Record<string, unknown>) => boolean> = {
      'user.update': (b) => UserUpdate.safeParse(b).success,
      'group.update': (b) => GroupUpdate.safeParse(b).success,
      'message.edit': ({ sender: _s, ...b }) => MessageUpdate.safeParse(b).success,
    }
    let checked = 0
    for (const [entity, title, before, after, p] of rows) {
      for (const intent of changeIntents(entity, before, after, p)) {
        const check = checks[intent.kind]
        if (check) {
          checked++
          expect(check(intent.body as Record<string, unknown>), `${title}: ${JSON.stringify(intent.body)}`).toBe(true)
        }
      }
    }
    expect(checked).toBeGreaterThan(10)
  })

  it('the stored payload advances when nothing visible changed or a change is applied, not when every change is only reported', () => {
    expect(advancesPayload([])).toBe(true)
    expect(advancesPayload(changeIntents('users', user, { ...user, name: 'B' }, policies()))).toBe(true)
    expect(advancesPayload(changeIntents('users', user, { ...user, name: 'B' }, policies({ users: 'report' })))).toBe(false)
    expect(advancesPayload(changeIntents('messages', message, { ...message, sentAt: 5 }, policies()))).toBe(false)
    expect(advancesPayload(changeIntents('messages', message, { ...message, sentAt: 5, data: { text: 'x' } }, policies()))).toBe(true)
  })
})

describe('changes: config', () => {
  it('defaults as documented', () => {
    expect(ChangesSchema.parse({})).toEqual({
      users: 'apply',
      groups: 'apply',
      members: 'apply',
      edits: 'apply',
      deletions: 'apply',
      conflicts: 'report',
      vanished: { users: 'delete', groups: 'report', members: 'delete', messages: 'report', maxShare: 0.5 },
    })
  })

  it('vanished.maxShare: up to 10 items always, beyond that at most the share of the loaded ones', () => {
    expect(vanishedAllowed(0.5, 10, 10)).toBe(true)
    expect(vanishedAllowed(0.5, 11, 22)).toBe(true)
    expect(vanishedAllowed(0.5, 12, 22)).toBe(false)
    expect(vanishedAllowed(1, 1000, 1000)).toBe(true)
    expect(vanishedAllowed(0, 11, 1_000_000)).toBe(false)
  })

  it('lists every problem', () => {
    const r = ChangesSchema.safeParse({ users: 'update', vanished: { groups: 'apply', posts: 'delete' }, extra: 1 })
    expect(r.success).toBe(false)
    const paths = (r.error?.issues ?? []).map((i) => i.path.join('.')).sort()
    expect(paths).toEqual(['', 'users', 'vanished', 'vanished.groups'])
  })
})
