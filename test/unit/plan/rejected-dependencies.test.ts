/**
 * A user or group the *mapping* rejects (not the connector: its source row decoded) is, for the
 * records that refer to it, what a rejected source row is: its messages and memberships are
 * rejected naming that reject — not skipped as if a policy had chosen to leave them out (a skip is
 * never sent again; a reject is listed, fixed and retried) and never "unknown". `mapPage` over one
 * run's pages, as a plan reads them: users, groups, members, messages.
 */
import { expect, it } from 'vitest'

import { defaultPolicies } from '../../../mappings/index.ts'
import type { SourceRow, SourceSession } from '../../../src/model/connector.ts'
import type { LegacyEntity, LegacyGroup, LegacyMember, LegacyMessage, LegacyRecordOf, LegacyUser } from '../../../src/model/records.ts'
import { mapPage } from '../../../src/plan/map-page.ts'
import type { PlanSink } from '../../../src/plan/plan-job.ts'
import { startPlanRun } from '../../../src/plan/plan-run.ts'

const NOW = Date.UTC(2026, 0, 1)
const ok = <E extends LegacyEntity>(record: LegacyRecordOf[E]): SourceRow<LegacyRecordOf[E]> => ({ ok: true, record })

const user = (id: string, o: Partial<LegacyUser> = {}): LegacyUser => ({ id, name: `User ${id}`, isBot: false, createdAt: NOW - 86_400_000, ...o })
const group = (id: string, o: Partial<LegacyGroup> = {}): LegacyGroup => ({
  id,
  name: `Group ${id}`,
  type: 'public',
  ownerId: 'good',
  createdAt: NOW - 86_400_000,
  ...o,
})
const member = (groupId: string, userId: string): LegacyMember => ({ groupId, userId, scope: 'participant', banned: false })
const message = (id: string, senderId: string, receiverId: string): LegacyMessage => ({
  id,
  senderId,
  receiverType: 'group',
  receiverId,
  type: 'text',
  text: `hello from ${senderId}`,
  sentAt: NOW - 3_600_000,
})

it("the members and messages of a user and a group the mapping rejected are rejected naming that reject, not skipped as 'dependencies'", async () => {
  const sink = { resumable: true, loadIds: async () => [], loadUsers: async () => new Map(), loadGroups: async () => new Map() }
  const run = await startPlanRun({
    jobId: 'j',
    session: {} as SourceSession,
    policies: defaultPolicies(),
    now: NOW,
    sink: sink as unknown as PlanSink,
  })

  const users = mapPage(run, 'users', [ok<'users'>(user('good')), ok<'users'>(user('bad', { metadata: { 'k\u0000': 1, k: 2 } }))], run.entities.users)
  expect(users.rejects.map((r) => [r.legacyId, r.code])).toEqual([['bad', 'MAPPING_INVALID']])
  const userReject = users.rejects[0]?.message ?? ''

  const groups = mapPage(
    run,
    'groups',
    [ok<'groups'>(group('open')), ok<'groups'>(group('locked', { type: 'secret' as LegacyGroup['type'] }))],
    run.entities.groups,
  )
  expect(groups.rejects.map((r) => [r.legacyId, r.code])).toEqual([['locked', 'MAPPING_INVALID']])
  const groupReject = groups.rejects[0]?.message ?? ''

  const members = mapPage(
    run,
    'members',
    [ok<'members'>(member('open', 'good')), ok<'members'>(member('open', 'bad')), ok<'members'>(member('locked', 'good'))],
    run.entities.members,
  )
  const messages = mapPage(
    run,
    'messages',
    [ok<'messages'>(message('m1', 'good', 'open')), ok<'messages'>(message('m2', 'bad', 'open')), ok<'messages'>(message('m3', 'good', 'locked'))],
    run.entities.messages,
  )

  for (const page of [members, messages]) {
    expect(page.skips).toEqual([])
  }
  expect(members.items.map((i) => i.legacyId)).toEqual(['open/good'])
  expect(messages.items.map((i) => i.legacyId)).toEqual(['m1'])
  const reasons = (rejects: readonly { legacyId: string; message: string }[]) => Object.fromEntries(rejects.map((r) => [r.legacyId, r.message]))
  expect(reasons(members.rejects)).toEqual({
    'open/bad': `userId: its user "bad" was rejected (${userReject})`,
    'locked/good': `groupId: its group "locked" was rejected (${groupReject})`,
  })
  expect(reasons(messages.rejects)).toEqual({
    m2: expect.stringContaining(`its sender "bad" was rejected (${userReject})`),
    m3: expect.stringContaining(`its group "locked" was rejected (${groupReject})`),
  })
})
