import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { alternativeId, MemoryIdRegistry, stableHash } from '../../../mappings/ids.ts'
import { mapUser } from '../../../mappings/map-user.ts'
import type { PoliciesInput } from '../../../mappings/policies.ts'
import type { PolicyOutcome } from '../../../mappings/types.ts'
import type { LegacyUser } from '../../../src/model/index.ts'
import { UserImport } from '../../../src/target/schemas.ts'

const NOW = Date.UTC(2025, 5, 1)
const T = Date.UTC(2024, 0, 1, 12, 0, 0, 500) // 1704110400.5 s
const T_S = 1_704_110_400
const BASE: LegacyUser = { id: 'u1', name: 'Ann Lee', isBot: false }
const o = (policy: PolicyOutcome['policy'], outcome: string): PolicyOutcome => ({ policy, outcome })

interface Case {
  name: string
  record?: Record<string, unknown>
  policies?: PoliciesInput
  ids?: MemoryIdRegistry
  expected:
    | { kind: 'items'; payload: UserImport; outcomes: PolicyOutcome[] }
    | { kind: 'skipped'; policy: string; outcomes: PolicyOutcome[] }
    | { kind: 'rejected'; field: string; policy?: string }
}

const legacy = (extra: Record<string, unknown> = {}) => ({ legacy: { id: 'u1', ...extra } })

describe('mapUser', () => {
  it.each<Case>([
    { name: 'minimal user', expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [] } },
    {
      name: 'every field',
      record: {
        username: 'ann',
        email: 'ann@example.com',
        avatar: 'https://cdn/a.png',
        profileUrl: 'https://intranet/ann',
        metadata: { dept: 'ops' },
        tags: ['staff'],
        createdAt: T,
        lastActiveAt: T + 60_000,
      },
      expected: {
        kind: 'items',
        payload: {
          uid: 'u1',
          name: 'Ann Lee',
          avatar: 'https://cdn/a.png',
          link: 'https://intranet/ann',
          createdAt: T_S,
          lastActiveAt: T_S + 60,
          metadata: { dept: 'ops', email: 'ann@example.com', ...legacy({ username: 'ann' }) },
          tags: ['staff'],
        },
        outcomes: [o('userEmails', 'in-metadata')],
      },
    },
    {
      name: 'e-mail under userEmails: drop: left out and counted',
      record: { email: 'ann@example.com' },
      policies: { userEmails: 'drop' },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [o('userEmails', 'dropped')] },
    },
    {
      name: 'blank e-mail: nothing to carry, nothing counted',
      record: { email: '  ' },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [] },
    },
    {
      name: 'uppercase id: normalised by the id policy and counted',
      record: { id: 'U1' },
      expected: {
        kind: 'items',
        payload: { uid: `u1_${stableHash('U1')}`, name: 'Ann Lee', metadata: { legacy: { id: 'U1' } } },
        outcomes: [o('ids', 'normalised')],
      },
    },
    {
      name: 'id collision with an earlier user: re-keyed and counted',
      record: { id: 'u1' },
      ids: new MemoryIdRegistry([{ kind: 'user', legacyId: 'other', platformId: 'u1' }]),
      expected: {
        kind: 'items',
        payload: { uid: alternativeId('u1', 1), name: 'Ann Lee', metadata: legacy() },
        outcomes: [o('ids', 'collision-rekeyed')],
      },
    },
    {
      name: 'name over 100 characters: cut (without splitting an emoji) and counted',
      record: { name: `${'n'.repeat(99)}👍🏽tail` },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'n'.repeat(99), metadata: legacy() }, outcomes: [o('names', 'truncated')] },
    },
    {
      name: 'name surrounded by spaces: trimmed',
      record: { name: '  Ann  ' },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann', metadata: legacy() }, outcomes: [] },
    },
    { name: 'null name: rejected', record: { name: null }, expected: { kind: 'rejected', field: 'name' } },
    { name: 'blank name: rejected', record: { name: '   ' }, expected: { kind: 'rejected', field: 'name' } },
    { name: 'missing id: rejected', record: { id: '' }, expected: { kind: 'rejected', field: 'id' } },
    {
      name: 'bots keep: tagged and marked',
      record: { isBot: true, tags: ['x'] },
      expected: {
        kind: 'items',
        payload: { uid: 'u1', name: 'Ann Lee', tags: ['x', 'bot'], metadata: legacy({ isBot: true }) },
        outcomes: [o('bots', 'kept')],
      },
    },
    {
      name: 'bots keep with no tag',
      record: { isBot: true },
      policies: { bots: { tag: '' } },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy({ isBot: true }) }, outcomes: [o('bots', 'kept')] },
    },
    {
      name: 'bots skip',
      record: { isBot: true },
      policies: { bots: { mode: 'skip' } },
      expected: { kind: 'skipped', policy: 'bots', outcomes: [o('bots', 'skipped')] },
    },
    {
      name: 'deactivated keep: deactivatedAt in seconds',
      record: { deactivatedAt: T },
      expected: {
        kind: 'items',
        payload: { uid: 'u1', name: 'Ann Lee', deactivatedAt: T_S, metadata: legacy() },
        outcomes: [o('deactivatedUsers', 'kept-deactivated')],
      },
    },
    {
      name: 'deactivated keep with an invalid time: still deactivated (now), counted',
      record: { deactivatedAt: Number.NaN },
      expected: {
        kind: 'items',
        payload: { uid: 'u1', name: 'Ann Lee', deactivatedAt: NOW / 1000, metadata: legacy() },
        outcomes: [o('fieldLimits', 'timestamp-dropped'), o('deactivatedUsers', 'kept-deactivated')],
      },
    },
    {
      name: 'deactivated activate',
      record: { deactivatedAt: T },
      policies: { deactivatedUsers: 'activate' },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [o('deactivatedUsers', 'activated')] },
    },
    {
      name: 'deactivated skip',
      record: { deactivatedAt: T },
      policies: { deactivatedUsers: 'skip' },
      expected: { kind: 'skipped', policy: 'deactivatedUsers', outcomes: [o('deactivatedUsers', 'skipped')] },
    },
    {
      name: 'role mapped',
      record: { role: 'system_admin' },
      policies: { roles: { map: { system_admin: 'admin' } } },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', role: 'admin', metadata: legacy() }, outcomes: [o('roles', 'mapped')] },
    },
    {
      name: 'role unmapped, drop (default)',
      record: { role: 'system_user' },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [o('roles', 'dropped')] },
    },
    {
      name: 'role unmapped, keep (valid id)',
      record: { role: 'moderator' },
      policies: { roles: { unmapped: 'keep' } },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', role: 'moderator', metadata: legacy() }, outcomes: [o('roles', 'kept')] },
    },
    {
      name: 'role unmapped, keep, but not a valid id: dropped',
      record: { role: 'System Admin' },
      policies: { roles: { unmapped: 'keep' } },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy() }, outcomes: [o('roles', 'dropped')] },
    },
    {
      name: 'legacyMetadata.ids false and nothing else: no metadata',
      policies: { legacyMetadata: { ids: false } },
      expected: { kind: 'items', payload: { uid: 'u1', name: 'Ann Lee' }, outcomes: [] },
    },
  ])('$name', (c) => {
    const ctx = createMappingContext({ now: NOW, policies: c.policies ?? {}, ...(c.ids ? { ids: c.ids } : {}) })
    const r = mapUser({ ...BASE, ...c.record } as LegacyUser, ctx)
    const e = c.expected
    if (e.kind === 'items') {
      expect(r).toEqual({
        kind: 'items',
        items: [{ entity: 'users', targetKey: e.payload.uid, payload: e.payload }],
        extraItems: [],
        outcomes: e.outcomes,
      })
      expect(UserImport.safeParse(e.payload).success).toBe(true)
    } else {
      expect(r).toMatchObject(e)
    }
  })
})

describe('mapUser: fieldLimits', () => {
  const longUrl = `https://x/${'a'.repeat(3000)}`
  const tags30 = Array.from({ length: 30 }, (_, i) => `t${i}`)
  it.each([
    { name: 'avatar URL over 3,000', record: { avatar: longUrl }, fixed: {}, outcome: 'url-dropped', field: 'avatar' },
    { name: 'profile URL over 3,000', record: { profileUrl: longUrl }, fixed: {}, outcome: 'url-dropped', field: 'profileUrl' },
    { name: 'more than 25 tags', record: { tags: tags30 }, fixed: { tags: tags30.slice(0, 25) }, outcome: 'tags-trimmed', field: 'tags' },
    { name: 'a tag over 100', record: { tags: ['t'.repeat(120), ''] }, fixed: { tags: ['t'.repeat(100)] }, outcome: 'tags-trimmed', field: 'tags' },
    { name: 'metadata over 5 KB', record: { metadata: { blob: 'x'.repeat(6000) } }, fixed: {}, outcome: 'metadata-dropped', field: 'metadata' },
    { name: 'invalid createdAt (negative)', record: { createdAt: -1 }, fixed: {}, outcome: 'timestamp-dropped', field: 'createdAt' },
    { name: 'invalid lastActiveAt (NaN)', record: { lastActiveAt: Number.NaN }, fixed: {}, outcome: 'timestamp-dropped', field: 'lastActiveAt' },
  ])('$name: fix drops/trims it and counts; reject rejects', ({ record, fixed, outcome, field }) => {
    const fix = mapUser({ ...BASE, ...record }, createMappingContext({ now: NOW }))
    expect(fix).toEqual({
      kind: 'items',
      items: [{ entity: 'users', targetKey: 'u1', payload: { uid: 'u1', name: 'Ann Lee', metadata: legacy(), ...fixed } }],
      extraItems: [],
      outcomes: [o('fieldLimits', outcome)],
    })
    const reject = mapUser({ ...BASE, ...record }, createMappingContext({ now: NOW, policies: { fieldLimits: 'reject' } }))
    expect(reject).toMatchObject({ kind: 'rejected', field, policy: 'fieldLimits' })
  })
})
