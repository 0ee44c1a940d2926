import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { mapMember } from '../../../mappings/map-member.ts'
import { isCanonicalMemberImport } from '../../../src/target/member-import-check.ts'
import { LIMITS, MemberImport } from '../../../src/target/schemas.ts'

type Obj = Record<string, unknown>

const GOOD: readonly Obj[] = [
  { memberId: 'g1_member_u1', guid: 'g1', uid: 'u1' },
  { memberId: 'g1_member_u2', guid: 'g1', uid: 'u2', scope: 'admin', isBanned: true, joinedAt: 1_700_000_000 },
  { memberId: 'g-2_member_u_3', guid: 'g-2', uid: 'u_3', scope: 'participant', joinedAt: 0 },
  { memberId: 'g1_member_u4', guid: 'g1', uid: 'u4', scope: 'moderator', isBanned: false, joinedAt: 9_999_999_999 },
  { memberId: 'g1_member_u5', guid: 'g1', uid: 'u5', scope: undefined, joinedAt: undefined },
]

/** Changes of a good item: each gives an item zod refuses, reorders, or takes. */
const CHANGES: readonly { readonly name: string; readonly change: (m: Obj) => Obj }[] = [
  { name: 'memberId missing', change: ({ memberId: _, ...m }) => m },
  { name: 'memberId empty', change: (m) => ({ ...m, memberId: '' }) },
  { name: 'memberId not guid_member_uid', change: (m) => ({ ...m, memberId: `${String(m.uid)}_member_${String(m.guid)}` }) },
  { name: 'memberId a number', change: (m) => ({ ...m, memberId: 5 }) },
  { name: 'guid missing', change: ({ guid: _, ...m }) => m },
  { name: 'guid uppercase', change: (m) => ({ ...m, guid: 'G1', memberId: `G1_member_${String(m.uid)}` }) },
  { name: 'uid with a space', change: (m) => ({ ...m, uid: 'u 1', memberId: `${String(m.guid)}_member_u 1` }) },
  {
    name: 'uid too long',
    change: (m) => ({ ...m, uid: 'u'.repeat(LIMITS.ID_MAX + 1), memberId: `${String(m.guid)}_member_${'u'.repeat(LIMITS.ID_MAX + 1)}` }),
  },
  { name: 'uid undefined', change: (m) => ({ ...m, uid: undefined }) },
  { name: 'scope unknown', change: (m) => ({ ...m, scope: 'owner' }) },
  { name: 'scope null', change: (m) => ({ ...m, scope: null }) },
  { name: 'isBanned a string', change: (m) => ({ ...m, isBanned: 'true' }) },
  { name: 'joinedAt in ms', change: (m) => ({ ...m, joinedAt: 1_700_000_000_000 }) },
  { name: 'joinedAt a fraction', change: (m) => ({ ...m, joinedAt: 1.5 }) },
  { name: 'joinedAt negative', change: (m) => ({ ...m, joinedAt: -1 }) },
  { name: 'joinedAt a string', change: (m) => ({ ...m, joinedAt: '5' }) },
  { name: 'an unknown key', change: (m) => ({ ...m, role: 'x' }) },
  { name: 'an unknown key set to undefined', change: (m) => ({ ...m, role: undefined }) },
  { name: 'keys in another order', change: ({ memberId, ...m }) => ({ ...m, memberId }) },
  { name: 'group details (left to zod)', change: (m) => ({ ...m, groupDetails: { guid: m.guid, name: 'G', type: 'public' } }) },
  { name: 'user details (left to zod)', change: (m) => ({ ...m, userDetails: { uid: m.uid, name: 'Ann' } }) },
  { name: 'null prototype item', change: (m) => Object.assign(Object.create(null) as Obj, m) },
  { name: 'a class instance', change: (m) => Object.assign(new (class Item {})(), m) as Obj },
]

const json = (v: unknown) => JSON.stringify(v)
const isPlainRoot = (v: object) => Object.getPrototypeOf(v) === Object.prototype

describe('isCanonicalMemberImport: true only where MemberImport.safeParse succeeds with the same JSON', () => {
  const cases = GOOD.flatMap((item, i) => [
    { name: `good item ${i + 1}`, item },
    ...CHANGES.map(({ name, change }) => ({ name: `item ${i + 1}, ${name}`, item: change(item) })),
  ])
  it.each(cases)('$name', ({ item }) => {
    const parsed = MemberImport.safeParse(item)
    if (isCanonicalMemberImport(item)) {
      expect(parsed.success).toBe(true)
      expect(json(item)).toBe(json(parsed.data))
    } else if (parsed.success) {
      // Left to the schema although valid: only for keys out of zod's order, details the mapping
      // never sends, or an object that is not plain.
      expect(json(item) !== json(parsed.data) || 'groupDetails' in item || 'userDetails' in item || !isPlainRoot(item)).toBe(true)
    }
  })

  it('passes every good item, and refuses every invalid one', () => {
    for (const item of GOOD) {
      expect(isCanonicalMemberImport(item)).toBe(true)
    }
    const invalid = cases.filter(({ item }) => !MemberImport.safeParse(item).success)
    expect(invalid.length).toBeGreaterThan(60)
    expect(invalid.filter(({ item }) => isCanonicalMemberImport(item))).toEqual([])
  })
})

describe("mapMember's items take the cheap path", () => {
  it('builds member items in the schema order, so zod does not rebuild them', () => {
    const now = Date.UTC(2025, 5, 1)
    const ctx = createMappingContext({
      now,
      users: { u1: { uid: 'u1', name: 'Ann' } },
      groups: { g1: { guid: 'g1', name: 'General', type: 'public', owner: 'u1', createdAt: 1_600_000_000 } },
    })
    for (const record of [
      { groupId: 'g1', userId: 'u1', scope: 'participant' as const, banned: false },
      { groupId: 'g1', userId: 'u1', scope: 'admin' as const, banned: true, joinedAt: now - 60_000 },
    ]) {
      const r = mapMember(record, ctx)
      expect(r.kind).toBe('items')
      const payload = r.kind === 'items' ? r.items[0]?.payload : undefined
      expect(isCanonicalMemberImport(payload)).toBe(true)
    }
  })
})
