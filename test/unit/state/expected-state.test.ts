/** What verify expects the platform to show for a loaded item: its payload, and what its done updates did beyond it. */
import { describe, expect, it } from 'vitest'

import {
  expectedGroup,
  expectedMember,
  expectedMessageMarks,
  expectedUser,
  explainDifference,
  type ItemUpdate,
  sameValue,
} from '../../../src/report/expected-state.ts'

const u = (kind: ItemUpdate['kind'], status: ItemUpdate['status'] = 'done'): ItemUpdate => ({ kind, status })

describe('expectedUser', () => {
  it.each([
    ['payload only', { name: 'Ada' }, [], { name: 'Ada', avatar: null, link: null, role: 'default', metadata: null, deactivated: false }],
    ['deactivated in the payload', { name: 'Ada', deactivatedAt: 5 }, [], { deactivated: true }],
    ['deactivated by a done update (vanished)', { name: 'Ada' }, [u('user.deactivate')], { deactivated: true }],
    ['a planned deactivation is not done yet', { name: 'Ada' }, [u('user.deactivate', 'planned')], { deactivated: false }],
    ['reactivated after a deactivation', { name: 'Ada', deactivatedAt: 5 }, [u('user.deactivate'), u('user.reactivate')], { deactivated: false }],
    ['a reported deactivation leaves the user active', { name: 'Ada' }, [u('user.deactivate', 'reported')], { deactivated: false }],
    ['role and metadata from the payload', { name: 'Ada', role: 'admin', metadata: { a: 1 } }, [], { role: 'admin', metadata: { a: 1 } }],
  ] as const)('%s', (_name, payload, updates, want) => {
    expect(expectedUser(payload, updates)).toMatchObject(want)
  })
})

describe('expectedGroup', () => {
  it.each([
    [
      'present, fields from the payload',
      { name: 'G', type: 'private' },
      [],
      { present: true, fields: { name: 'G', type: 'private', icon: null, metadata: null } },
    ],
    ['owner compared only when the payload has one', { name: 'G', type: 'public', owner: 'ada' }, [], { fields: { owner: 'ada' } }],
    ['deleted by a done group.delete', { name: 'G', type: 'public' }, [u('group.delete')], { present: false }],
    ['a planned group.delete keeps it', { name: 'G', type: 'public' }, [u('group.delete', 'sent')], { present: true }],
  ] as const)('%s', (_name, payload, updates, want) => {
    expect(expectedGroup(payload, updates)).toMatchObject(want)
  })
})

describe('expectedMember', () => {
  it.each([
    ['a participant by default', {}, [], { present: true, scope: 'participant', banned: false }],
    ['scope and ban from the payload', { scope: 'moderator', isBanned: true }, [], { scope: 'moderator', banned: true }],
    ['kicked', { scope: 'admin' }, [u('member.kick')], { present: false }],
    ['kicked, then added again', {}, [u('member.kick'), u('member.add')], { present: true }],
    ['a rejected kick leaves it', {}, [u('member.kick', 'rejected')], { present: true }],
    ['banned, then unbanned', { isBanned: true }, [u('member.ban'), u('member.unban')], { banned: false }],
  ] as const)('%s', (_name, payload, updates, want) => {
    expect(expectedMember(payload, updates)).toMatchObject(want)
  })
})

describe('expectedMessageMarks', () => {
  it.each([
    ['untouched', [], { edited: false, deleted: false }],
    ['edited', [u('message.edit')], { edited: true, deleted: false }],
    ['an edit not sent yet', [u('message.edit', 'planned')], { edited: false, deleted: false }],
    ['deleted', [u('message.delete')], { edited: false, deleted: true }],
    ['a tombstone is an edit', [u('message.edit'), u('message.unchangeable', 'reported')], { edited: true, deleted: false }],
    ['a reported deletion', [u('message.delete', 'reported')], { edited: false, deleted: false }],
  ] as const)('%s', (_name, updates, want) => {
    expect(expectedMessageMarks(updates)).toEqual(want)
  })
})

describe('explainDifference', () => {
  it.each([
    [
      'an update waiting explains it',
      [u('user.update', 'planned')],
      false,
      { explained: true, note: 'user.update not applied yet (planned): run `chatferry load`' },
    ],
    ['one in flight too', [u('message.edit', 'sent')], false, { explained: true }],
    [
      'a rejected update does not',
      [u('member.scope', 'rejected')],
      false,
      {
        explained: false,
        note: 'member.scope rejected by the platform: `chatferry rejects` says why; once its cause is fixed, `chatferry retry-rejected` plans it again and `chatferry load` sends it',
      },
    ],
    ['a change without an update (older ledger) does', [], true, { explained: true }],
    [
      'a change dropped by platform-wins is recorded, and explained as such (not as "no update was recorded")',
      [u('group.update', 'dropped')],
      true,
      {
        explained: true,
        note: 'group.update dropped: the item was changed on the platform after chatferry wrote it and changes.conflicts is platform-wins, so the platform keeps its version',
      },
    ],
    [
      'a change held back as a conflict names the commands that send it',
      [u('user.update', 'conflict')],
      true,
      {
        explained: true,
        note: "user.update held back: the item was changed on the platform after chatferry wrote it (changes.conflicts: report); to send the source's version set changes.conflicts: source-wins then run `chatferry retry-rejected --conflicts` and `chatferry load`",
      },
    ],
    ['otherwise unexplained', [u('user.update')], false, { explained: false, note: 'differs' }],
  ] as const)('%s', (_name, updates, changed, want) => {
    expect(explainDifference(updates, changed, 'differs')).toMatchObject(want)
  })
})

describe('sameValue', () => {
  it.each([
    [{ a: 1, b: { c: 2, d: 3 } }, { b: { d: 3, c: 2 }, a: 1 }, true],
    [[1, 2], [2, 1], false],
    [null, null, true],
    ['x', 'y', false],
  ])('%j vs %j', (a, b, same) => {
    expect(sameValue(a, b)).toBe(same)
  })
})
