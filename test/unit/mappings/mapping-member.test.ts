import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { mapMember } from '../../../mappings/map-member.ts'
import type { PoliciesInput } from '../../../mappings/policies.ts'
import type { PolicyOutcome } from '../../../mappings/types.ts'
import type { LegacyMember } from '../../../src/model/index.ts'
import { MemberImport } from '../../../src/target/schemas.ts'

const NOW = Date.UTC(2025, 5, 1)
const NOW_S = NOW / 1000
const CREATED_S = NOW_S - 100 * 86_400
const o = (policy: PolicyOutcome['policy'], outcome: string): PolicyOutcome => ({ policy, outcome })

const USERS = {
  u1: { uid: 'u1', name: 'Ann' },
  owner: { uid: 'boss', name: 'Boss' },
  bot1: { skipped: true as const, policy: 'bots' as const },
}
const GROUPS = {
  g1: { guid: 'g1', name: 'General', type: 'public' as const, createdAt: CREATED_S, owner: 'boss' },
  nocreated: { guid: 'nc', name: 'No createdAt', type: 'private' as const },
  brandnew: { guid: 'bn', name: 'Created now', type: 'public' as const, createdAt: NOW_S - 1 },
  arch: { skipped: true as const, policy: 'archivedGroups' as const },
}
const BASE: LegacyMember = { groupId: 'g1', userId: 'u1', scope: 'participant', banned: false, joinedAt: (CREATED_S + 10) * 1000 }

interface Case {
  name: string
  record?: Partial<LegacyMember> & Record<string, unknown>
  policies?: PoliciesInput
  expected:
    | { kind: 'items'; payload: Omit<MemberImport, 'memberId'>; outcomes: PolicyOutcome[] }
    | { kind: 'skipped'; policy: string; outcomes: PolicyOutcome[] }
    | { kind: 'rejected'; field: string; policy?: string }
}

const member = (over: Partial<MemberImport> = {}) => ({ guid: 'g1', uid: 'u1', scope: 'participant' as const, joinedAt: CREATED_S + 10, ...over })

describe('mapMember', () => {
  it.each<Case>([
    { name: 'a participant inside the window', expected: { kind: 'items', payload: member(), outcomes: [] } },
    { name: 'admin kept admin', record: { scope: 'admin' }, expected: { kind: 'items', payload: member({ scope: 'admin' }), outcomes: [] } },
    {
      name: 'moderator kept moderator',
      record: { scope: 'moderator' },
      expected: { kind: 'items', payload: member({ scope: 'moderator' }), outcomes: [] },
    },
    {
      name: 'scopes map moderator → participant',
      record: { scope: 'moderator' },
      policies: { scopes: { moderator: 'participant' } },
      expected: { kind: 'items', payload: member(), outcomes: [o('scopes', 'moderator-to-participant')] },
    },
    {
      name: 'the group owner gets scopes.owner (admin)',
      record: { userId: 'owner' },
      expected: { kind: 'items', payload: member({ uid: 'boss', scope: 'admin' }), outcomes: [o('scopes', 'owner-to-admin')] },
    },
    { name: 'unknown scope: rejected', record: { scope: 'owner' as 'admin' }, expected: { kind: 'rejected', field: 'scope' } },
    {
      name: 'banned, keep',
      record: { banned: true },
      expected: { kind: 'items', payload: member({ isBanned: true }), outcomes: [o('bans', 'kept')] },
    },
    {
      name: 'banned, skip',
      record: { banned: true },
      policies: { bans: 'skip' },
      expected: { kind: 'skipped', policy: 'bans', outcomes: [o('bans', 'skipped')] },
    },
    {
      name: 'no joinedAt: field absent',
      record: { joinedAt: undefined },
      expected: { kind: 'items', payload: member({ joinedAt: undefined }), outcomes: [] },
    },
    {
      name: 'joinedAt before group createdAt: clamped to createdAt + 1',
      record: { joinedAt: (CREATED_S - 5000) * 1000 },
      expected: { kind: 'items', payload: member({ joinedAt: CREATED_S + 1 }), outcomes: [o('joinedAt', 'clamped')] },
    },
    {
      name: 'joinedAt equal to group createdAt: clamped (the window is exclusive)',
      record: { joinedAt: CREATED_S * 1000 },
      expected: { kind: 'items', payload: member({ joinedAt: CREATED_S + 1 }), outcomes: [o('joinedAt', 'clamped')] },
    },
    {
      name: 'joinedAt in the future: clamped to now − 1',
      record: { joinedAt: NOW + 86_400_000 },
      expected: { kind: 'items', payload: member({ joinedAt: NOW_S - 1 }), outcomes: [o('joinedAt', 'clamped')] },
    },
    {
      name: 'joinedAt outside, omit',
      record: { joinedAt: (CREATED_S - 5000) * 1000 },
      policies: { joinedAt: 'omit' },
      expected: { kind: 'items', payload: member({ joinedAt: undefined }), outcomes: [o('joinedAt', 'omitted')] },
    },
    {
      name: 'joinedAt outside, reject',
      record: { joinedAt: (CREATED_S - 5000) * 1000 },
      policies: { joinedAt: 'reject' },
      expected: { kind: 'rejected', field: 'joinedAt', policy: 'joinedAt' },
    },
    {
      name: 'empty window (group created this second): omitted',
      record: { groupId: 'brandnew', joinedAt: (NOW_S - 100) * 1000 },
      expected: { kind: 'items', payload: member({ guid: 'bn', joinedAt: undefined }), outcomes: [o('joinedAt', 'omitted')] },
    },
    {
      name: 'group without createdAt: only the upper bound applies',
      record: { groupId: 'nocreated', joinedAt: 1000 },
      expected: { kind: 'items', payload: member({ guid: 'nc', joinedAt: 1 }), outcomes: [] },
    },
    {
      name: 'invalid joinedAt (NaN): dropped and counted (fix)',
      record: { joinedAt: Number.NaN },
      expected: { kind: 'items', payload: member({ joinedAt: undefined }), outcomes: [o('fieldLimits', 'timestamp-dropped')] },
    },
    {
      name: 'invalid joinedAt, fieldLimits reject',
      record: { joinedAt: -1 },
      policies: { fieldLimits: 'reject' },
      expected: { kind: 'rejected', field: 'joinedAt', policy: 'fieldLimits' },
    },
    { name: 'unknown group: rejected', record: { groupId: 'nope' }, expected: { kind: 'rejected', field: 'groupId' } },
    { name: 'unknown user: rejected', record: { userId: 'ghost' }, expected: { kind: 'rejected', field: 'userId' } },
    {
      name: 'group skipped (archived): skipped as a dependency',
      record: { groupId: 'arch' },
      expected: { kind: 'skipped', policy: 'dependencies', outcomes: [o('dependencies', 'group-skipped-by-archivedGroups')] },
    },
    {
      name: 'user skipped (bot): skipped as a dependency',
      record: { userId: 'bot1' },
      expected: { kind: 'skipped', policy: 'dependencies', outcomes: [o('dependencies', 'user-skipped-by-bots')] },
    },
  ])('$name', (c) => {
    const ctx = createMappingContext({ now: NOW, policies: c.policies ?? {}, users: USERS, groups: GROUPS })
    const r = mapMember({ ...BASE, ...c.record } as LegacyMember, ctx)
    const e = c.expected
    if (e.kind === 'items') {
      const full = JSON.parse(JSON.stringify({ memberId: `${e.payload.guid}_member_${e.payload.uid}`, ...e.payload })) as MemberImport
      expect(r).toEqual({
        kind: 'items',
        items: [{ entity: 'members', targetKey: full.memberId, payload: full }],
        extraItems: [],
        outcomes: e.outcomes,
      })
      expect(MemberImport.safeParse(full).success).toBe(true)
    } else {
      expect(r).toMatchObject(e)
    }
  })
})
