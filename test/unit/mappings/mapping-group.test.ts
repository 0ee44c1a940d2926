import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { stableHash } from '../../../mappings/ids.ts'
import { mapGroup } from '../../../mappings/map-group.ts'
import type { PoliciesInput } from '../../../mappings/policies.ts'
import type { PolicyOutcome } from '../../../mappings/types.ts'
import type { LegacyGroup } from '../../../src/model/index.ts'
import { GroupImport } from '../../../src/target/schemas.ts'

const NOW = Date.UTC(2025, 5, 1)
const T = Date.UTC(2024, 0, 1)
const T_S = T / 1000
const BASE: LegacyGroup = { id: 'g1', name: 'General', type: 'public' }
const o = (policy: PolicyOutcome['policy'], outcome: string): PolicyOutcome => ({ policy, outcome })
const USERS = { u1: { uid: 'u1', name: 'Ann' }, bot1: { skipped: true as const, policy: 'bots' as const } }
const legacy = (extra: Record<string, unknown> = {}) => ({ legacy: { id: 'g1', ...extra } })

interface Case {
  name: string
  record?: Record<string, unknown>
  policies?: PoliciesInput
  expected:
    | { kind: 'items'; payload: GroupImport; outcomes: PolicyOutcome[] }
    | { kind: 'skipped'; policy: string; outcomes: PolicyOutcome[] }
    | { kind: 'rejected'; field: string; policy?: string }
}

describe('mapGroup', () => {
  it.each<Case>([
    {
      name: 'minimal public group',
      expected: { kind: 'items', payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() }, outcomes: [] },
    },
    {
      name: 'every field; owner resolved to its uid',
      record: { type: 'private', ownerId: 'u1', icon: 'https://cdn/g.png', metadata: { team: 'core' }, tags: ['eng'], createdAt: T },
      expected: {
        kind: 'items',
        payload: {
          guid: 'g1',
          name: 'General',
          type: 'private',
          owner: 'u1',
          icon: 'https://cdn/g.png',
          createdAt: T_S,
          metadata: { team: 'core', ...legacy() },
          tags: ['eng'],
        },
        outcomes: [],
      },
    },
    {
      name: 'Sales Team id normalised',
      record: { id: 'Sales Team' },
      expected: {
        kind: 'items',
        payload: { guid: `sales_team_${stableHash('Sales Team')}`, name: 'General', type: 'public', metadata: { legacy: { id: 'Sales Team' } } },
        outcomes: [o('ids', 'normalised')],
      },
    },
    {
      name: 'password group with its password',
      record: { type: 'password', password: 's3cret' },
      expected: { kind: 'items', payload: { guid: 'g1', name: 'General', type: 'password', password: 's3cret', metadata: legacy() }, outcomes: [] },
    },
    {
      name: 'password group without password: made private (default)',
      record: { type: 'password' },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'private', metadata: legacy() },
        outcomes: [o('groupTypes', 'passwordless-to-private')],
      },
    },
    {
      name: 'password group without password, withoutPassword reject',
      record: { type: 'password' },
      policies: { groupTypes: { withoutPassword: 'reject' } },
      expected: { kind: 'rejected', field: 'password', policy: 'groupTypes' },
    },
    {
      name: 'groupTypes maps private → public',
      record: { type: 'private' },
      policies: { groupTypes: { private: 'public' } },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('groupTypes', 'private-to-public')],
      },
    },
    {
      name: 'groupTypes maps password → private: password dropped',
      record: { type: 'password', password: 's3cret' },
      policies: { groupTypes: { password: 'private' } },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'private', metadata: legacy() },
        outcomes: [o('groupTypes', 'password-to-private')],
      },
    },
    {
      name: 'password over 100 characters: rejected',
      record: { type: 'password', password: 'p'.repeat(101) },
      expected: { kind: 'rejected', field: 'password' },
    },
    { name: 'unknown type: rejected', record: { type: 'secret' as 'public' }, expected: { kind: 'rejected', field: 'type' } },
    { name: 'null name: rejected', record: { name: null }, expected: { kind: 'rejected', field: 'name' } },
    {
      name: 'name over 100: cut and counted',
      record: { name: 'g'.repeat(150) },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'g'.repeat(100), type: 'public', metadata: legacy() },
        outcomes: [o('names', 'truncated')],
      },
    },
    {
      name: 'unknown owner: omitted and counted',
      record: { ownerId: 'ghost' },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('groupOwner', 'unknown-omitted')],
      },
    },
    {
      name: 'owner skipped by a policy: omitted and counted',
      record: { ownerId: 'bot1' },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('groupOwner', 'unknown-omitted')],
      },
    },
    {
      name: 'description into metadata (default)',
      record: { description: 'All hands' },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: { description: 'All hands', ...legacy() } },
        outcomes: [o('groupDescription', 'in-metadata')],
      },
    },
    {
      name: 'groupDescription drop',
      record: { description: 'All hands' },
      policies: { groupDescription: 'drop' },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('groupDescription', 'dropped')],
      },
    },
    {
      name: 'archived keep: tagged, archivedAt in metadata',
      record: { archivedAt: T },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', tags: ['archived'], metadata: legacy({ archivedAt: T_S }) },
        outcomes: [o('archivedGroups', 'kept')],
      },
    },
    {
      name: 'archived keep with another tag',
      record: { archivedAt: T },
      policies: { archivedGroups: { tag: 'read-only' } },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', tags: ['read-only'], metadata: legacy({ archivedAt: T_S }) },
        outcomes: [o('archivedGroups', 'kept')],
      },
    },
    {
      name: 'archived skip',
      record: { archivedAt: T },
      policies: { archivedGroups: { mode: 'skip' } },
      expected: { kind: 'skipped', policy: 'archivedGroups', outcomes: [o('archivedGroups', 'skipped')] },
    },
    {
      name: 'invalid createdAt: dropped and counted (fix)',
      record: { createdAt: Number.NaN },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('fieldLimits', 'timestamp-dropped')],
      },
    },
    {
      name: 'invalid createdAt, fieldLimits reject',
      record: { createdAt: -10 },
      policies: { fieldLimits: 'reject' },
      expected: { kind: 'rejected', field: 'createdAt', policy: 'fieldLimits' },
    },
    {
      name: 'icon URL over 3,000: dropped (fix)',
      record: { icon: `https://x/${'i'.repeat(3000)}` },
      expected: {
        kind: 'items',
        payload: { guid: 'g1', name: 'General', type: 'public', metadata: legacy() },
        outcomes: [o('fieldLimits', 'url-dropped')],
      },
    },
  ])('$name', (c) => {
    const ctx = createMappingContext({ now: NOW, policies: c.policies ?? {}, users: USERS })
    const r = mapGroup({ ...BASE, ...c.record } as LegacyGroup, ctx)
    const e = c.expected
    if (e.kind === 'items') {
      expect(r).toEqual({
        kind: 'items',
        items: [{ entity: 'groups', targetKey: e.payload.guid, payload: e.payload }],
        extraItems: [],
        outcomes: e.outcomes,
      })
      expect(GroupImport.safeParse(e.payload).success).toBe(true)
    } else {
      expect(r).toMatchObject(e)
    }
  })
})
