/**
 * The creation time chatferry gives a group the source gives none (`mappings/group-created-at.ts`),
 * rule by rule, and what it does to the group's and its members' items.
 */
import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { deriveGroupCreatedAt } from '../../../mappings/group-created-at.ts'
import { mapGroup } from '../../../mappings/map-group.ts'
import { mapMember } from '../../../mappings/map-member.ts'
import type { GroupCreationHints, MappingContext, PlannedGroup } from '../../../mappings/types.ts'
import type { GroupImport, MemberImport } from '../../../src/target/schemas.ts'

const NOW = Date.UTC(2025, 5, 1)
const NOW_S = NOW / 1000
const JOIN = Date.UTC(2024, 0, 10, 9, 30, 15, 700)
const SENT = Date.UTC(2024, 0, 5, 8, 0, 0, 250)
const EARLIEST = Date.UTC(2023, 6, 1)
const s = (ms: number): number => Math.floor(ms / 1000)

describe('deriveGroupCreatedAt', () => {
  it.each<{ name: string; hints: GroupCreationHints; createdAt: number; rule: string }>([
    { name: 'earliest member join only: one second before it', hints: { firstJoinedAt: JOIN }, createdAt: s(JOIN) - 1, rule: 'before-first-join' },
    { name: 'earliest message only: one second before it', hints: { firstSentAt: SENT }, createdAt: s(SENT) - 1, rule: 'before-first-message' },
    { name: 'both, the message earlier', hints: { firstJoinedAt: JOIN, firstSentAt: SENT }, createdAt: s(SENT) - 1, rule: 'before-first-message' },
    { name: 'both, the join earlier', hints: { firstJoinedAt: SENT, firstSentAt: JOIN }, createdAt: s(SENT) - 1, rule: 'before-first-join' },
    {
      name: 'both at the same instant: the join names it',
      hints: { firstJoinedAt: JOIN, firstSentAt: JOIN },
      createdAt: s(JOIN) - 1,
      rule: 'before-first-join',
    },
    {
      name: 'neither: one second before the earliest of the whole source',
      hints: { sourceEarliest: EARLIEST },
      createdAt: s(EARLIEST) - 1,
      rule: 'before-source-earliest',
    },
    { name: 'nothing known at all: two seconds before the run', hints: {}, createdAt: NOW_S - 2, rule: 'before-run' },
    {
      name: 'a time the ledger holds wins over every source time',
      hints: { planned: 1_600_000_000, firstJoinedAt: SENT, firstSentAt: SENT, sourceEarliest: EARLIEST },
      createdAt: 1_600_000_000,
      rule: 'kept-from-ledger',
    },
    {
      name: 'a join in the future: never after now − 2 s',
      hints: { firstJoinedAt: NOW + 86_400_000 },
      createdAt: NOW_S - 2,
      rule: 'before-first-join',
    },
    { name: 'a join at the epoch: never before 1970', hints: { firstJoinedAt: 0 }, createdAt: 0, rule: 'before-first-join' },
    {
      name: 'unusable times are ignored',
      hints: { firstJoinedAt: Number.NaN, firstSentAt: -5, sourceEarliest: EARLIEST },
      createdAt: s(EARLIEST) - 1,
      rule: 'before-source-earliest',
    },
  ])('$name', ({ hints, createdAt, rule }) => {
    expect(deriveGroupCreatedAt(hints, NOW)).toEqual({ createdAt, rule })
  })
})

function ctxWith(hints: Record<string, GroupCreationHints> | undefined, groups: Record<string, PlannedGroup> = {}): MappingContext {
  const base = createMappingContext({ now: NOW, users: { u1: { uid: 'u1', name: 'Ann' } }, groups })
  return hints === undefined ? base : { ...base, groupCreation: (id) => hints[id] ?? {} }
}

describe('mapGroup and mapMember with group times', () => {
  it('a group without createdAt gets the derived one, counted as a joinedAt outcome', () => {
    const r = mapGroup({ id: 'g1', name: 'General', type: 'public' }, ctxWith({ g1: { firstJoinedAt: JOIN, firstSentAt: SENT } }))
    expect(r.kind).toBe('items')
    if (r.kind !== 'items') {
      return
    }
    expect((r.items[0]?.payload as GroupImport).createdAt).toBe(s(SENT) - 1)
    expect(r.outcomes).toContainEqual({ policy: 'joinedAt', outcome: 'createdAt-before-first-message' })
  })

  it("the source's createdAt is kept: nothing derived", () => {
    const r = mapGroup({ id: 'g1', name: 'General', type: 'public', createdAt: EARLIEST }, ctxWith({ g1: { firstJoinedAt: JOIN } }))
    if (r.kind !== 'items') {
      throw new Error(r.kind)
    }
    expect((r.items[0]?.payload as GroupImport).createdAt).toBe(s(EARLIEST))
    expect(r.outcomes).toEqual([])
  })

  it('an invalid createdAt is dropped (fieldLimits) and derived', () => {
    const r = mapGroup({ id: 'g1', name: 'General', type: 'public', createdAt: Number.NaN }, ctxWith({ g1: { firstJoinedAt: JOIN } }))
    if (r.kind !== 'items') {
      throw new Error(r.kind)
    }
    expect((r.items[0]?.payload as GroupImport).createdAt).toBe(s(JOIN) - 1)
    expect(r.outcomes).toEqual([
      { policy: 'fieldLimits', outcome: 'timestamp-dropped' },
      { policy: 'joinedAt', outcome: 'createdAt-before-first-join' },
    ])
  })

  it('without group times in the context (tools, tests) nothing is derived', () => {
    const r = mapGroup({ id: 'g1', name: 'General', type: 'public' }, ctxWith(undefined))
    if (r.kind !== 'items') {
      throw new Error(r.kind)
    }
    expect((r.items[0]?.payload as GroupImport).createdAt).toBeUndefined()
  })

  it('the earliest member keeps its own joinedAt under the derived createdAt (no clamp)', () => {
    const g = mapGroup({ id: 'g1', name: 'General', type: 'public' }, ctxWith({ g1: { firstJoinedAt: JOIN } }))
    if (g.kind !== 'items') {
      throw new Error(g.kind)
    }
    const planned = g.items[0]?.payload as GroupImport
    const m = mapMember({ groupId: 'g1', userId: 'u1', scope: 'participant', banned: false, joinedAt: JOIN }, ctxWith({}, { g1: planned }))
    if (m.kind !== 'items') {
      throw new Error(m.kind)
    }
    expect((m.items[0]?.payload as MemberImport).joinedAt).toBe(s(JOIN))
    expect(m.outcomes).toEqual([])
  })
})
