/**
 * Table tests of the pure parts of the webhook receiver: what an envelope says was changed
 * (`platformChangesOf`, `envelopeHash`) and who changed it (`originOf`: chatferry's echo or the
 * platform).
 */
import { describe, expect, it } from 'vitest'

import { originOf, type OwnWrites } from '../../../src/state/platform-event-origin.ts'
import { envelopeHash, platformChangesOf } from '../../../src/target/webhook-changes.ts'
import { WebhookEnvelope } from '../../../src/target/webhooks.ts'

const user = (uid: string) => ({ entity: { uid, name: uid }, entityType: 'user' })
const group = { guid: 'R1', name: 'General', type: 'public', conversationId: 'group_r1', owner: 'u1', updatedAt: 1_800_000_000 }
const actionMessage = (action: 'edited' | 'deleted', on: Record<string, unknown>) => ({
  message: {
    id: '900',
    conversationId: 'group_r1',
    sender: 'u1',
    receiverType: 'group',
    receiver: 'r1',
    category: 'action',
    type: 'message',
    data: { action, entities: { by: user('u1'), for: { entity: { guid: 'r1' }, entityType: 'group' }, on: { entity: on, entityType: 'message' } } },
    sentAt: 1_800_000_001,
  },
})
const envelope = (trigger: string, data: Record<string, unknown>) =>
  WebhookEnvelope.parse({ trigger, data, appId: 'app', region: 'us', webhook: 'chatferry_app' })

describe('platformChangesOf', () => {
  it.each([
    [
      'message_edited',
      actionMessage('edited', { id: 42, editedAt: 1_800_000_005, data: { text: 'new' } }),
      [{ entity: 'messages', platformKey: '42', changedAt: new Date(1_800_000_005_000), state: { text: 'new' } }],
    ],
    [
      'message_deleted',
      actionMessage('deleted', { id: '43', deletedAt: 1_800_000_006, data: {} }),
      [{ entity: 'messages', platformKey: '43', changedAt: new Date(1_800_000_006_000), state: { deleted: true } }],
    ],
    [
      'group_updated',
      { group },
      [{ entity: 'groups', platformKey: 'r1', changedAt: new Date(1_800_000_000_000), state: { name: 'General', type: 'public', owner: 'u1' } }],
    ],
    ['group_deleted', { group }, [{ entity: 'groups', platformKey: 'r1', changedAt: null, state: { deleted: true } }]],
    [
      'group_member_scope_changed',
      { group, members: { U2: { uid: 'U2', name: 'Two', scope: 'admin', oldScope: 'participant' } }, by: { uid: 'u1', name: 'One' } },
      [{ entity: 'members', platformKey: 'r1_member_u2', changedAt: null, state: { change: 'scope', scope: 'admin' } }],
    ],
    [
      'group_member_kicked',
      { group, members: { u2: { uid: 'u2', name: 'Two' }, u3: { uid: 'u3', name: 'Three' } }, by: { uid: 'u1', name: 'One' } },
      [
        { entity: 'members', platformKey: 'r1_member_u2', changedAt: null, state: { change: 'kicked' } },
        { entity: 'members', platformKey: 'r1_member_u3', changedAt: null, state: { change: 'kicked' } },
      ],
    ],
    ['user_blocked', { users: {}, by: { uid: 'u1', name: 'One' } }, []],
  ])('%s', (trigger, data, want) => {
    expect(platformChangesOf(envelope(trigger, data))).toEqual(want)
  })

  it('the hash ignores key order and tells different data apart', () => {
    const a = envelope('group_updated', { group })
    const b = WebhookEnvelope.parse({ webhook: 'chatferry_app', region: 'us', appId: 'app', data: { group: { ...group } }, trigger: 'group_updated' })
    expect(envelopeHash(a)).toBe(envelopeHash(b))
    expect(envelopeHash(envelope('group_updated', { group: { ...group, name: 'Other' } }))).not.toBe(envelopeHash(a))
  })
})

describe('originOf', () => {
  const writes = (o: Partial<OwnWrites>): OwnWrites => ({ payload: null, updates: [], ...o })
  it.each<[string, string, Record<string, unknown>, OwnWrites | undefined, 'platform' | 'chatferry']>([
    ['unknown item', 'message_edited', { text: 'x' }, undefined, 'platform'],
    [
      'edit chatferry sent',
      'message_edited',
      { text: 'x' },
      writes({ updates: [{ kind: 'message.edit', body: { text: 'x', sender: 'u1' } }] }),
      'chatferry',
    ],
    [
      'edit chatferry sent (data.text)',
      'message_edited',
      { text: 'x' },
      writes({ updates: [{ kind: 'message.edit', body: { data: { text: 'x' } } }] }),
      'chatferry',
    ],
    [
      'someone else edited after it',
      'message_edited',
      { text: 'y' },
      writes({ updates: [{ kind: 'message.edit', body: { text: 'x' } }] }),
      'platform',
    ],
    ['edited to what was loaded', 'message_edited', { text: 'as loaded' }, writes({ payload: { data: { text: 'as loaded' } } }), 'chatferry'],
    ['deleted by chatferry', 'message_deleted', { deleted: true }, writes({ updates: [{ kind: 'message.delete', body: {} }] }), 'chatferry'],
    ['deleted there', 'message_deleted', { deleted: true }, writes({ payload: { data: { text: 'a' } } }), 'platform'],
    [
      'renamed by chatferry',
      'group_updated',
      { name: 'B', type: 'public' },
      writes({ updates: [{ kind: 'group.update', body: { name: 'B' } }] }),
      'chatferry',
    ],
    ['renamed there', 'group_updated', { name: 'C', type: 'public' }, writes({ payload: { guid: 'r1', name: 'B', type: 'public' } }), 'platform'],
    [
      'icon set there',
      'group_updated',
      { name: 'B', type: 'public', icon: 'https://i' },
      writes({ payload: { name: 'B', type: 'public' } }),
      'platform',
    ],
    [
      'the state loaded',
      'group_updated',
      { name: 'B', type: 'public', owner: 'u1' },
      writes({ payload: { name: 'B', type: 'public', owner: 'u1' } }),
      'chatferry',
    ],
    [
      'scope chatferry set',
      'group_member_scope_changed',
      { change: 'scope', scope: 'admin' },
      writes({ updates: [{ kind: 'member.scope', body: { scope: 'admin' } }] }),
      'chatferry',
    ],
    [
      'scope changed there',
      'group_member_scope_changed',
      { change: 'scope', scope: 'admin' },
      writes({ payload: { scope: 'participant' } }),
      'platform',
    ],
    [
      'added as imported (an import echo)',
      'group_member_added',
      { change: 'added', scope: 'participant' },
      writes({ payload: { guid: 'r1', uid: 'u2' } }),
      'chatferry',
    ],
    ['kicked by chatferry', 'group_member_kicked', { change: 'kicked' }, writes({ updates: [{ kind: 'member.kick', body: {} }] }), 'chatferry'],
    ['kicked there', 'group_member_kicked', { change: 'kicked' }, writes({ payload: { scope: 'participant' } }), 'platform'],
    ['banned there', 'group_member_banned', { change: 'banned' }, writes({ updates: [{ kind: 'member.kick', body: {} }] }), 'platform'],
  ])('%s', (_what, trigger, state, own, want) => {
    expect(originOf(trigger, state, own)).toBe(want)
  })
})
