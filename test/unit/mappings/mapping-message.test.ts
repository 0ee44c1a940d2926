import { describe, expect, it } from 'vitest'

import { createMappingContext, type MemoryContextOptions } from '../../../mappings/context.ts'
import { alternativeId, MemoryIdRegistry, stableHash } from '../../../mappings/ids.ts'
import { mapMessage } from '../../../mappings/map-message.ts'
import { placeholderUid } from '../../../mappings/message-participants.ts'
import { SYSTEM_USER_LEGACY_ID } from '../../../mappings/message-system.ts'
import type { PoliciesInput } from '../../../mappings/policies.ts'
import type { MapResult, PolicyOutcome } from '../../../mappings/types.ts'
import type { AdjustFn } from '../../../mappings/user-module.ts'
import type { LegacyMessage } from '../../../src/model/index.ts'
import { jsonBytes, LIMITS, MessageImport, type MessageImport as MessageItem, type UserImport } from '../../../src/target/schemas.ts'

const NOW = Date.UTC(2025, 5, 1) // 1748736000 s
const NOW_S = 1_748_736_000
const DAY = 86_400_000
const SENT = NOW - 60_000
const SENT_S = NOW_S - 60

const USERS: MemoryContextOptions['users'] = {
  u1: { uid: 'u1', name: 'Ann', username: 'ann', avatar: 'https://cdn.example/ann.png' },
  u2: { uid: 'u2', name: 'Bob', username: 'bob.smith' },
  bot1: { skipped: true, policy: 'bots' },
}
const GROUPS: MemoryContextOptions['groups'] = {
  g1: { guid: 'g1', name: 'General', type: 'public', createdAt: NOW_S - 365 * 86_400 },
  arch: { skipped: true, policy: 'archivedGroups' },
}
const MESSAGES: MemoryContextOptions['messages'] = {
  p1: { muid: 'p1', text: 'the quick brown fox jumps over the lazy dog and then over <@uid:u2> again', senderName: 'Ann' },
}

const BASE: LegacyMessage = { id: 'm1', senderId: 'u1', receiverType: 'group', receiverId: 'g1', type: 'text', text: 'hello', sentAt: SENT }

function ctxOf(policies: PoliciesInput = {}, extra: Partial<MemoryContextOptions> = {}) {
  return createMappingContext({ now: NOW, policies, users: USERS, groups: GROUPS, messages: MESSAGES, ...extra })
}

/** The expected payload: the base message's, with `over` applied (`data.metadata.legacy` merged). */
function payload(over: Partial<MessageItem> = {}, legacy: Record<string, unknown> = {}): MessageItem {
  const data = over.data ?? { text: 'hello' }
  return {
    muid: 'm1',
    sender: 'u1',
    receiverType: 'group',
    receiver: 'g1',
    category: 'message',
    type: 'text',
    sentAt: SENT_S,
    ...over,
    data: { ...data, metadata: { ...data.metadata, legacy: { id: 'm1', ...legacy } } },
  }
}

const o = (policy: PolicyOutcome['policy'], outcome: string): PolicyOutcome => ({ policy, outcome })

function single(r: MapResult<'messages'>) {
  if (r.kind !== 'items') {
    return r
  }
  return {
    kind: r.kind,
    payloads: r.items.map((i) => i.payload),
    extra: r.extraItems.map((i) => i.payload),
    outcomes: r.outcomes,
  }
}

interface Case {
  name: string
  record?: Partial<LegacyMessage> & Record<string, unknown>
  policies?: PoliciesInput
  ctx?: Partial<MemoryContextOptions>
  expected:
    | { kind: 'items'; payloads: MessageItem[]; extra?: UserImport[]; outcomes: PolicyOutcome[] }
    | { kind: 'skipped'; policy: string; outcomes: PolicyOutcome[] }
    | { kind: 'rejected'; field: string; policy?: string }
}

function check(c: Case) {
  const result = mapMessage({ ...BASE, ...c.record } as LegacyMessage, ctxOf(c.policies, c.ctx))
  const e = c.expected
  if (e.kind === 'items') {
    expect(single(result)).toEqual({ kind: 'items', payloads: e.payloads, extra: e.extra ?? [], outcomes: e.outcomes })
    if (result.kind === 'items') {
      for (const i of result.items) {
        expect(MessageImport.safeParse(i.payload).success).toBe(true)
      }
    }
  } else if (e.kind === 'skipped') {
    expect(result).toMatchObject({ kind: 'skipped', policy: e.policy, outcomes: e.outcomes })
  } else {
    expect(result).toMatchObject(e)
    if (e.policy === undefined) {
      expect(result).not.toHaveProperty('policy')
    }
  }
}

const placeholderZ: UserImport = {
  uid: placeholderUid('zz'),
  name: 'Unknown user zz',
  tags: ['placeholder'],
  metadata: { legacy: { id: 'zz', placeholder: true } },
}

describe('mapMessage: plain messages and fields', () => {
  it.each<Case>([
    { name: 'a plain group text message', expected: { kind: 'items', payloads: [payload()], outcomes: [] } },
    {
      name: 'one-to-one message',
      record: { receiverType: 'user', receiverId: 'u2' },
      expected: { kind: 'items', payloads: [payload({ receiverType: 'user', receiver: 'u2' })], outcomes: [] },
    },
    {
      name: 'uppercase legacy id: muid hashed',
      record: { id: 'M1' },
      expected: {
        kind: 'items',
        payloads: [{ ...payload({ muid: `m1_${stableHash('M1')}` }), data: { text: 'hello', metadata: { legacy: { id: 'M1' } } } }],
        outcomes: [],
      },
    },
    {
      name: 'sentAt ms floored to seconds; deliveredAt and readAt carried',
      record: { sentAt: SENT + 999, deliveredAt: SENT + 1500, readAt: SENT + 3000 },
      expected: { kind: 'items', payloads: [payload({ deliveredAt: SENT_S + 1, readAt: SENT_S + 3 })], outcomes: [] },
    },
    {
      name: "legacy metadata kept next to chatferry's key",
      record: { metadata: { props: { color: 'red' } } },
      expected: { kind: 'items', payloads: [payload({ data: { text: 'hello', metadata: { props: { color: 'red' } } } })], outcomes: [] },
    },
    {
      name: 'legacyMetadata.ids: false and no other facts: no metadata at all',
      policies: { legacyMetadata: { ids: false } },
      expected: {
        kind: 'items',
        payloads: [
          {
            muid: 'm1',
            sender: 'u1',
            receiverType: 'group',
            receiver: 'g1',
            category: 'message',
            type: 'text',
            sentAt: SENT_S,
            data: { text: 'hello' },
          },
        ],
        outcomes: [],
      },
    },
    {
      name: 'legacyMetadata.key renamed',
      policies: { legacyMetadata: { key: 'src' } },
      expected: {
        kind: 'items',
        payloads: [
          {
            muid: 'm1',
            sender: 'u1',
            receiverType: 'group',
            receiver: 'g1',
            category: 'message',
            type: 'text',
            sentAt: SENT_S,
            data: { text: 'hello', metadata: { src: { id: 'm1' } } },
          },
        ],
        outcomes: [],
      },
    },
    {
      name: 'custom message: category custom with customData',
      record: { type: 'custom', text: undefined, customData: { poll: { q: 'lunch?' } } },
      expected: {
        kind: 'items',
        payloads: [payload({ category: 'custom', type: 'custom', data: { customData: { poll: { q: 'lunch?' } } } })],
        outcomes: [],
      },
    },
  ])('$name', check)
})

describe('mapMessage: bad input is rejected with the field, never thrown', () => {
  it.each<Case>([
    { name: 'sentAt NaN', record: { sentAt: Number.NaN }, expected: { kind: 'rejected', field: 'sentAt' } },
    { name: 'sentAt negative', record: { sentAt: -1 }, expected: { kind: 'rejected', field: 'sentAt' } },
    { name: 'sentAt beyond 10 digits of seconds', record: { sentAt: 1e14 }, expected: { kind: 'rejected', field: 'sentAt' } },
    { name: 'sentAt missing', record: { sentAt: undefined }, expected: { kind: 'rejected', field: 'sentAt' } },
    { name: 'id missing', record: { id: '' }, expected: { kind: 'rejected', field: 'id' } },
    { name: 'sender id with U+0000', record: { senderId: 'u\u0000' }, expected: { kind: 'rejected', field: 'senderId' } },
    { name: 'unknown group', record: { receiverId: 'nope' }, expected: { kind: 'rejected', field: 'receiverId' } },
    { name: 'unknown receiver type', record: { receiverType: 'channel' as 'group' }, expected: { kind: 'rejected', field: 'receiverType' } },
    { name: 'sender missing', record: { senderId: '' }, expected: { kind: 'rejected', field: 'senderId' } },
    { name: 'custom message without customData', record: { type: 'custom' }, expected: { kind: 'rejected', field: 'customData' } },
    {
      name: 'data over 10 KB (customData): rejected on data',
      record: { type: 'custom', customData: { blob: 'x'.repeat(11 * 1024) } },
      expected: { kind: 'rejected', field: 'data' },
    },
    {
      name: 'unknown receiver with missingUsers: reject',
      record: { receiverType: 'user', receiverId: 'zz' },
      policies: { missingUsers: { mode: 'reject' } },
      expected: { kind: 'rejected', field: 'receiverId', policy: 'missingUsers' },
    },
  ])('$name', check)
})

describe('mapMessage: retention', () => {
  it.each<Case>([
    {
      name: 'older than retentionDays, oldMessages skip: skipped',
      record: { sentAt: NOW - 184 * DAY },
      expected: { kind: 'skipped', policy: 'retention', outcomes: [o('retention', 'skipped')] },
    },
    {
      name: 'older, oldMessages send (extended retention): sent and counted',
      record: { sentAt: NOW - 184 * DAY },
      policies: { retention: { oldMessages: 'send' } },
      expected: { kind: 'items', payloads: [payload({ sentAt: NOW_S - 184 * 86_400 })], outcomes: [o('retention', 'sent-extended')] },
    },
    {
      name: 'exactly at the cutoff: inside the window',
      record: { sentAt: NOW - 183 * DAY },
      expected: { kind: 'items', payloads: [payload({ sentAt: NOW_S - 183 * 86_400 })], outcomes: [] },
    },
    {
      name: 'retentionDays configured (30)',
      record: { sentAt: NOW - 31 * DAY },
      policies: { retention: { retentionDays: 30 } },
      expected: { kind: 'skipped', policy: 'retention', outcomes: [o('retention', 'skipped')] },
    },
  ])('$name', check)
})

describe('mapMessage: deletes', () => {
  it.each<Case>([
    {
      name: 'deletes skip',
      record: { deletedAt: SENT + 1000 },
      expected: { kind: 'skipped', policy: 'deletes', outcomes: [o('deletes', 'skipped')] },
    },
    {
      name: 'deletes tombstone: default text, deletedAt in metadata, attachments and reactions gone',
      record: { deletedAt: SENT + 1000, attachments: [{ url: 'https://f/x.png', name: 'x.png' }], reactions: [{ emoji: '👍', userId: 'u2' }] },
      policies: { deletes: { mode: 'tombstone' } },
      expected: {
        kind: 'items',
        payloads: [payload({ data: { text: 'This message was deleted.' } }, { deletedAt: SENT_S + 1 })],
        outcomes: [o('deletes', 'tombstoned')],
      },
    },
    {
      name: 'deletes tombstone with configured text',
      record: { deletedAt: SENT + 1000 },
      policies: { deletes: { mode: 'tombstone', tombstoneText: '(removed)' } },
      expected: {
        kind: 'items',
        payloads: [payload({ data: { text: '(removed)' } }, { deletedAt: SENT_S + 1 })],
        outcomes: [o('deletes', 'tombstoned')],
      },
    },
  ])('$name', check)
})

describe('mapMessage: system messages', () => {
  const systemUser: UserImport = { uid: 'system', name: 'System', metadata: { legacy: { systemUser: true } } }
  it.each<Case>([
    {
      name: 'systemMessages skip',
      record: { systemKind: 'system_join_channel', text: 'ann joined' },
      expected: { kind: 'skipped', policy: 'systemMessages', outcomes: [o('systemMessages', 'skipped')] },
    },
    {
      name: 'systemMessages as-user: sent by the system user, which is an extra item',
      record: { systemKind: 'system_join_channel', text: 'ann joined' },
      policies: { systemMessages: { mode: 'as-user' } },
      expected: {
        kind: 'items',
        payloads: [payload({ sender: 'system', data: { text: 'ann joined' } }, { systemKind: 'system_join_channel', sender: 'u1' })],
        extra: [systemUser],
        outcomes: [o('systemMessages', 'sent-as-user')],
      },
    },
    {
      name: 'as-user with empty text: the kind becomes the text',
      record: { systemKind: 'system_header_change', text: '' },
      policies: { systemMessages: { mode: 'as-user', systemUser: { uid: 'bot-admin', name: 'Admin' } } },
      expected: {
        kind: 'items',
        payloads: [payload({ sender: 'bot-admin', data: { text: '[system_header_change]' } }, { systemKind: 'system_header_change', sender: 'u1' })],
        extra: [{ uid: 'bot-admin', name: 'Admin', metadata: { legacy: { systemUser: true } } }],
        outcomes: [o('systemMessages', 'sent-as-user')],
      },
    },
    {
      name: 'as-user when a legacy user already holds the system uid: a distinct uid',
      record: { systemKind: 'system_join_channel', text: 'x' },
      policies: { systemMessages: { mode: 'as-user' } },
      ctx: { ids: new MemoryIdRegistry([{ kind: 'user', legacyId: 'system', platformId: 'system' }]) },
      expected: {
        kind: 'items',
        payloads: [
          payload({ sender: alternativeId(SYSTEM_USER_LEGACY_ID, 1), data: { text: 'x' } }, { systemKind: 'system_join_channel', sender: 'u1' }),
        ],
        extra: [{ ...systemUser, uid: alternativeId(SYSTEM_USER_LEGACY_ID, 1) }],
        outcomes: [o('systemMessages', 'sent-as-user')],
      },
    },
  ])('$name', check)
})

describe('mapMessage: threads', () => {
  it.each<Case>([
    {
      name: 'reply flattened with its known parent in metadata',
      record: { threadParentId: 'p1' },
      expected: { kind: 'items', payloads: [payload({}, { parent: { id: 'p1', muid: 'p1' } })], outcomes: [o('threads', 'flattened')] },
    },
    {
      name: 'reply to an unknown parent: derived muid, counted',
      record: { threadParentId: 'P9' },
      expected: {
        kind: 'items',
        payloads: [payload({}, { parent: { id: 'P9', muid: `p9_${stableHash('P9')}` } })],
        outcomes: [o('threads', 'flattened'), o('threads', 'parent-unknown')],
      },
    },
    {
      name: 'quoteParent true: 12 words, mention tokens made plain',
      record: { threadParentId: 'p1' },
      policies: { threads: { quoteParent: true } },
      expected: {
        kind: 'items',
        payloads: [
          payload(
            { data: { text: '> Ann: the quick brown fox jumps over the lazy dog and then over …\n\nhello' } },
            { parent: { id: 'p1', muid: 'p1' } },
          ),
        ],
        outcomes: [o('threads', 'flattened'), o('threads', 'quoted')],
      },
    },
    {
      name: 'quoteParent 3 words',
      record: { threadParentId: 'p1' },
      policies: { threads: { quoteParent: 3 } },
      expected: {
        kind: 'items',
        payloads: [payload({ data: { text: '> Ann: the quick brown …\n\nhello' } }, { parent: { id: 'p1', muid: 'p1' } })],
        outcomes: [o('threads', 'flattened'), o('threads', 'quoted')],
      },
    },
    {
      name: 'quoteParent with an unknown parent: no quote',
      record: { threadParentId: 'P9' },
      policies: { threads: { quoteParent: true } },
      expected: {
        kind: 'items',
        payloads: [payload({}, { parent: { id: 'P9', muid: `p9_${stableHash('P9')}` } })],
        outcomes: [o('threads', 'flattened'), o('threads', 'parent-unknown')],
      },
    },
    {
      name: 'threads.replies skip',
      record: { threadParentId: 'p1' },
      policies: { threads: { replies: 'skip' } },
      expected: { kind: 'skipped', policy: 'threads', outcomes: [o('threads', 'skipped')] },
    },
  ])('$name', check)
})

describe('mapMessage: edits, mentions, reactions', () => {
  it.each<Case>([
    {
      name: 'edited: latest text, editedAt in metadata',
      record: { text: 'hello (edited)', editedAt: SENT + 5000 },
      expected: {
        kind: 'items',
        payloads: [payload({ data: { text: 'hello (edited)' } }, { editedAt: SENT_S + 5 })],
        outcomes: [o('edits', 'editedAt-in-metadata')],
      },
    },
    {
      name: 'edits.editedAt drop',
      record: { text: 'hello (edited)', editedAt: SENT + 5000 },
      policies: { edits: { editedAt: 'drop' } },
      expected: { kind: 'items', payloads: [payload({ data: { text: 'hello (edited)' } })], outcomes: [o('edits', 'editedAt-dropped')] },
    },
    {
      name: 'mentions rewrite: @username and <@uid:LEGACY> forms, details added',
      record: { text: 'hi @Ann, ask @bob.smith. cc <@uid:u2> and mail ann@example.com', mentions: ['u1', 'u2'] },
      expected: {
        kind: 'items',
        payloads: [
          payload({
            data: { text: 'hi <@uid:u1>, ask <@uid:u2>. cc <@uid:u2> and mail ann@example.com' },
            mentionedUserDetails: { u1: { uid: 'u1', name: 'Ann', avatar: 'https://cdn.example/ann.png' }, u2: { uid: 'u2', name: 'Bob' } },
          }),
        ],
        outcomes: [o('mentions', 'rewritten')],
      },
    },
    {
      name: "mentions via the connector's mentionHandles (handle → legacy id)",
      record: { text: 'ping @annie and @ghost', mentionHandles: { annie: 'u1', ghost: 'nobody' } },
      expected: {
        kind: 'items',
        payloads: [
          payload({
            data: { text: 'ping <@uid:u1> and @ghost' },
            mentionedUserDetails: { u1: { uid: 'u1', name: 'Ann', avatar: 'https://cdn.example/ann.png' } },
          }),
        ],
        outcomes: [o('mentions', 'rewritten'), o('mentions', 'unresolved')],
      },
    },
    {
      name: 'mentions of an unknown user: text kept, counted unresolved',
      record: { text: 'hi @ghost', mentions: ['ghost'] },
      expected: { kind: 'items', payloads: [payload({ data: { text: 'hi @ghost' } })], outcomes: [o('mentions', 'unresolved')] },
    },
    {
      name: 'mentions keep',
      record: { text: 'hi @ann', mentions: ['u1'] },
      policies: { mentions: 'keep' },
      expected: { kind: 'items', payloads: [payload({ data: { text: 'hi @ann' } })], outcomes: [o('mentions', 'kept')] },
    },
    {
      name: 'reactions into metadata, grouped by emoji, de-duplicated',
      record: {
        reactions: [
          { emoji: '👍', userId: 'u1' },
          { emoji: '👍', userId: 'u2' },
          { emoji: '👍', userId: 'u1' },
          { emoji: 'tada', userId: 'u2' },
        ],
      },
      expected: {
        kind: 'items',
        payloads: [payload({}, { reactions: { '👍': ['u1', 'u2'], tada: ['u2'] } })],
        outcomes: [o('reactions', 'in-metadata')],
      },
    },
    {
      name: 'reaction by an unknown or skipped user: dropped, counted',
      record: {
        reactions: [
          { emoji: '👍', userId: 'u1' },
          { emoji: '👍', userId: 'ghost' },
          { emoji: '👍', userId: 'bot1' },
        ],
      },
      expected: {
        kind: 'items',
        payloads: [payload({}, { reactions: { '👍': ['u1'] } })],
        outcomes: [o('reactions', 'in-metadata'), o('reactions', 'reactor-unknown')],
      },
    },
    {
      name: 'reactions drop',
      record: { reactions: [{ emoji: '👍', userId: 'u1' }] },
      policies: { reactions: 'drop' },
      expected: { kind: 'items', payloads: [payload()], outcomes: [o('reactions', 'dropped')] },
    },
  ])('$name', check)
})

describe('mapMessage: content, attachments and empty messages', () => {
  const png = { url: 'https://files.example/a/photo.PNG?sig=1', name: '', size: 2048 }
  const pngItem = { url: png.url, name: 'photo.PNG', mimeType: 'image/png', extension: 'png', size: '2048' }
  it.each<Case>([
    {
      name: 'text type with an image attachment: image message, name/extension/mime derived',
      record: { text: 'look', attachments: [png] },
      expected: { kind: 'items', payloads: [payload({ type: 'image', data: { text: 'look', attachments: [pngItem] } })], outcomes: [] },
    },
    {
      name: 'mixed attachments: file',
      record: { text: '', attachments: [png, { url: 'https://f/r.pdf', name: 'r.pdf' }] },
      expected: {
        kind: 'items',
        payloads: [
          payload({
            type: 'file',
            data: { attachments: [pngItem, { url: 'https://f/r.pdf', name: 'r.pdf', mimeType: 'application/pdf', extension: 'pdf' }] },
          }),
        ],
        outcomes: [],
      },
    },
    {
      name: 'legacy media type kept; declared mime kept',
      record: { type: 'video', text: undefined, attachments: [{ url: 'https://f/v', name: 'clip', mimeType: 'video/mp4', extension: 'mp4' }] },
      expected: {
        kind: 'items',
        payloads: [
          payload({ type: 'video', data: { attachments: [{ url: 'https://f/v', name: 'clip', mimeType: 'video/mp4', extension: 'mp4' }] } }),
        ],
        outcomes: [],
      },
    },
    {
      name: 'empty text without attachments: skipped',
      record: { text: '' },
      expected: { kind: 'skipped', policy: 'emptyMessages', outcomes: [o('emptyMessages', 'skipped')] },
    },
    {
      name: 'whitespace-only text: skipped',
      record: { text: ' \n\t ' },
      expected: { kind: 'skipped', policy: 'emptyMessages', outcomes: [o('emptyMessages', 'skipped')] },
    },
    {
      name: 'no text at all: skipped',
      record: { text: undefined },
      expected: { kind: 'skipped', policy: 'emptyMessages', outcomes: [o('emptyMessages', 'skipped')] },
    },
    {
      name: 'emptyMessages reject',
      record: { text: '' },
      policies: { emptyMessages: 'reject' },
      expected: { kind: 'rejected', field: 'text', policy: 'emptyMessages' },
    },
    {
      name: 'broken attachment (no url), drop: the text message stays',
      record: { attachments: [{ url: '', name: 'lost.png' }] },
      expected: { kind: 'items', payloads: [payload()], outcomes: [o('brokenAttachments', 'dropped')] },
    },
    {
      name: 'broken attachment (url null), drop, no text left: skipped as empty',
      record: { type: 'image', text: '', attachments: [{ url: null as unknown as string, name: 'lost.png' }] },
      expected: { kind: 'skipped', policy: 'emptyMessages', outcomes: [o('brokenAttachments', 'dropped'), o('emptyMessages', 'skipped')] },
    },
    {
      name: 'broken attachment, reject',
      record: { attachments: [png, { url: '', name: 'lost.png' }] },
      policies: { brokenAttachments: 'reject' },
      expected: { kind: 'rejected', field: 'attachments.1.url', policy: 'brokenAttachments' },
    },
  ])('$name', check)
})

describe('mapMessage: missing users and skipped dependencies', () => {
  it.each<Case>([
    {
      name: 'unknown sender: placeholder user created and counted',
      record: { senderId: 'zz' },
      expected: {
        kind: 'items',
        payloads: [payload({ sender: placeholderZ.uid })],
        extra: [placeholderZ],
        outcomes: [o('missingUsers', 'sender-placeholder')],
      },
    },
    {
      name: 'unknown receiver: placeholder',
      record: { receiverType: 'user', receiverId: 'zz' },
      expected: {
        kind: 'items',
        payloads: [payload({ receiverType: 'user', receiver: placeholderZ.uid })],
        extra: [placeholderZ],
        outcomes: [o('missingUsers', 'receiver-placeholder')],
      },
    },
    {
      name: 'placeholder naming rule, uid prefix and tag configured',
      record: { senderId: 'zz' },
      policies: { missingUsers: { name: 'Former member ({id})', uidPrefix: 'gone-', tag: '' } },
      expected: {
        kind: 'items',
        payloads: [payload({ sender: `gone-${stableHash('zz')}` })],
        extra: [{ uid: `gone-${stableHash('zz')}`, name: 'Former member (zz)', metadata: { legacy: { id: 'zz', placeholder: true } } }],
        outcomes: [o('missingUsers', 'sender-placeholder')],
      },
    },
    {
      name: 'unknown sender, missingUsers reject',
      record: { senderId: 'zz' },
      policies: { missingUsers: { mode: 'reject' } },
      expected: { kind: 'rejected', field: 'senderId', policy: 'missingUsers' },
    },
    {
      name: 'sender skipped by a policy (bot): message skipped as a dependency',
      record: { senderId: 'bot1' },
      expected: { kind: 'skipped', policy: 'dependencies', outcomes: [o('dependencies', 'sender-skipped-by-bots')] },
    },
    {
      name: 'group skipped by a policy (archived): message skipped',
      record: { receiverId: 'arch' },
      expected: { kind: 'skipped', policy: 'dependencies', outcomes: [o('dependencies', 'group-skipped-by-archivedGroups')] },
    },
  ])('$name', check)

  it('the same unknown user gets the same placeholder on every message and run (recorded in the id map)', () => {
    const ids = new MemoryIdRegistry()
    const a = mapMessage({ ...BASE, senderId: 'zz' }, ctxOf({}, { ids }))
    const b = mapMessage({ ...BASE, id: 'm2', senderId: 'zz' }, ctxOf({}, { ids }))
    const c = mapMessage({ ...BASE, id: 'm3', senderId: 'zz' }, ctxOf({}, { ids: new MemoryIdRegistry(ids.entries()) }))
    const keys = [a, b, c].map((r) => (r.kind === 'items' ? r.extraItems[0]?.targetKey : r.kind))
    expect(keys).toEqual([placeholderZ.uid, placeholderZ.uid, placeholderZ.uid])
    expect(ids.get('user', 'zz')).toBe(placeholderZ.uid)
  })
})

describe('mapMessage: fieldLimits on messages', () => {
  it.each<Case>([
    {
      name: 'invalid optional timestamp (deliveredAt NaN), fix: dropped and counted',
      record: { deliveredAt: Number.NaN },
      expected: { kind: 'items', payloads: [payload()], outcomes: [o('fieldLimits', 'timestamp-dropped')] },
    },
    {
      name: 'invalid optional timestamp, reject',
      record: { readAt: -5 },
      policies: { fieldLimits: 'reject' },
      expected: { kind: 'rejected', field: 'readAt', policy: 'fieldLimits' },
    },
    {
      name: 'data over 10 KB (legacy metadata), fix: legacy metadata dropped',
      record: { metadata: { big: 'x'.repeat(11 * 1024) } },
      expected: { kind: 'items', payloads: [payload()], outcomes: [o('fieldLimits', 'metadata-dropped')] },
    },
    {
      name: 'data over 10 KB (legacy metadata), reject',
      record: { metadata: { big: 'x'.repeat(11 * 1024) } },
      policies: { fieldLimits: 'reject' },
      expected: { kind: 'rejected', field: 'metadata', policy: 'fieldLimits' },
    },
  ])('$name', check)
})

describe('mapMessage: longText', () => {
  const OVER = 70_000 // over the 65,536-character payload limit (and the 10 KB data limit)

  it.each([
    { name: 'no whitespace: hard cuts', text: 'a'.repeat(OVER), joiner: '' },
    { name: 'words: cut at spaces', text: 'word '.repeat(OVER / 5).trim(), joiner: ' ' },
    { name: 'multi-byte text (3-byte chars)', text: '語'.repeat(OVER), joiner: '' },
    { name: 'astral chars are never split', text: '😀'.repeat(OVER / 2), joiner: '' },
    { name: 'escaped chars counted as JSON bytes', text: '"\\\u0001'.repeat(OVER / 3), joiner: '' },
  ])('split ($name): parts fit, keys are <muid>-pN, text is preserved', ({ text, joiner }) => {
    const r = mapMessage({ ...BASE, text, attachments: [{ url: 'https://f/a.png', name: 'a.png' }] }, ctxOf({ longText: { maxParts: 200 } }))
    expect(r.kind).toBe('items')
    if (r.kind !== 'items') {
      return
    }
    expect(r.outcomes).toEqual([o('longText', 'split')])
    const n = r.items.length
    expect(n).toBeGreaterThan(1)
    expect(r.items.map((i) => i.targetKey)).toEqual(['m1', ...Array.from({ length: n - 1 }, (_, i) => `m1-p${i + 2}`)])
    expect(r.items.map((i) => i.payload.data?.text).join(joiner)).toBe(text)
    r.items.forEach((item, i) => {
      expect(MessageImport.safeParse(item.payload).success).toBe(true)
      expect(jsonBytes(item.payload.data)).toBeLessThanOrEqual(LIMITS.MESSAGE_DATA_BYTES_MAX)
      expect(item.payload.data?.metadata?.legacy).toMatchObject({ id: 'm1', part: { n: i + 1, of: n, first: 'm1' } })
      expect(item.payload.type).toBe(i === 0 ? 'image' : 'text')
      expect(item.payload.data?.attachments?.length ?? 0).toBe(i === 0 ? 1 : 0)
    })
    const sortKeys = r.items.map((i) => i.sortKey as string)
    expect([...sortKeys].sort()).toEqual(sortKeys)
  })

  it('split keeps mention tokens whole and gives each part the details of its own mentions', () => {
    const text = `${'b'.repeat(10_150)}<@uid:u1>${'c'.repeat(20)}`
    const r = mapMessage({ ...BASE, text: text.replace('<@uid:u1>', '<@uid:u1>'), mentions: ['u1'] }, ctxOf())
    if (r.kind !== 'items') {
      throw new Error(r.kind)
    }
    expect(r.items.map((i) => i.payload.data?.text).join('')).toBe(text)
    expect(r.items.filter((i) => i.payload.data?.text?.includes('<@uid:u1>')).length).toBe(1)
    for (const i of r.items) {
      expect(i.payload.mentionedUserDetails === undefined).toBe(!i.payload.data?.text?.includes('<@uid:u1>'))
    }
  })

  it('truncate: one message within 10 KB ending with the marker', () => {
    const r = mapMessage({ ...BASE, text: 'a'.repeat(OVER) }, ctxOf({ longText: { mode: 'truncate' } }))
    if (r.kind !== 'items') {
      throw new Error(r.kind)
    }
    expect(r.outcomes).toEqual([o('longText', 'truncated')])
    expect(r.items).toHaveLength(1)
    const item = r.items[0]!
    expect(item.targetKey).toBe('m1')
    expect(item.payload.data?.text?.endsWith('a […]')).toBe(true)
    expect(item.payload.data?.metadata?.legacy).toEqual({ id: 'm1', truncated: true })
    expect(jsonBytes(item.payload.data)).toBeLessThanOrEqual(LIMITS.MESSAGE_DATA_BYTES_MAX)
    expect(jsonBytes(item.payload.data)).toBeGreaterThan(LIMITS.MESSAGE_DATA_BYTES_MAX - 20)
  })

  it('more parts than longText.maxParts: rejected', () => {
    const r = mapMessage({ ...BASE, text: 'a'.repeat(OVER) }, ctxOf({ longText: { maxParts: 3 } }))
    expect(r).toMatchObject({ kind: 'rejected', field: 'text', policy: 'longText' })
  })

  it('a text just under the limit is one message', () => {
    const r = mapMessage({ ...BASE, text: 'a'.repeat(10_000) }, ctxOf())
    expect(r.kind === 'items' && r.items.length).toBe(1)
    expect(r.kind === 'items' && r.outcomes).toEqual([])
  })
})

describe('mapMessage: user module', () => {
  const tagIt: AdjustFn = (entity, item, _record) => (entity === 'messages' ? { ...item, tags: ['imported'] } : item)
  it.each<Case & { adjust: AdjustFn }>([
    {
      name: 'adjust modifies the item: re-validated and counted',
      adjust: tagIt,
      expected: { kind: 'items', payloads: [{ ...payload(), tags: ['imported'] }], outcomes: [o('userModule', 'adjusted')] },
    },
    { name: 'adjust returns undefined: unchanged', adjust: () => undefined, expected: { kind: 'items', payloads: [payload()], outcomes: [] } },
    {
      name: 'adjust returns null: skipped by the user module',
      adjust: () => null,
      expected: { kind: 'skipped', policy: 'userModule', outcomes: [o('userModule', 'skipped')] },
    },
    {
      name: 'adjust throws: rejected, the run goes on',
      adjust: () => {
        throw new Error('boom')
      },
      expected: { kind: 'rejected', field: '(user-module)', policy: 'userModule' },
    },
    {
      name: 'adjust returns an invalid item: rejected with the field path',
      adjust: (_e, item, _r) => ({ ...item, sender: 'Not Valid' }) as never,
      expected: { kind: 'rejected', field: 'sender' },
    },
    {
      name: 'adjust returns a promise: rejected',
      adjust: (async () => null) as unknown as AdjustFn,
      expected: { kind: 'rejected', field: '(user-module)', policy: 'userModule' },
    },
  ])('$name', (c) => check({ ...c, ctx: { adjust: c.adjust } }))

  it('adjust gets a copy: mutating it does not leak into the result unless returned', () => {
    const r = mapMessage(BASE, ctxOf({}, { adjust: (_e, item, _r) => void ((item as { sender: string }).sender = 'x') }))
    expect(r.kind === 'items' && r.items[0]?.payload.sender).toBe('u1')
  })
})
