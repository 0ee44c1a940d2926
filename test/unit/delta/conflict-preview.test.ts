/**
 * The conflict policy's pure parts, table-tested: the rule a delta records by and `plan` previews
 * with (conflict-hold.ts `conflictOf`), the dry run's tally of its answers (conflict-preview.ts,
 * update-tally.ts) and the report's rows (conflict-rows.ts; the terminal and HTML lines are checked
 * end to end in test/integration/plan/plan-conflicts.test.ts and report-html.test.ts).
 */
import { describe, expect, it } from 'vitest'

import { collectingClassifier } from '../../../src/plan/conflict-preview.ts'
import type { ConflictTally } from '../../../src/plan/update-tally.ts'
import { tallyOne, UPDATE_SAMPLES } from '../../../src/plan/update-tally.ts'
import { conflictRows } from '../../../src/report/conflict-rows.ts'
import { EntityPlan, type PlanReport } from '../../../src/report/schema.ts'
import { type ConflictCandidate, conflictOf } from '../../../src/state/conflict-hold.ts'
import type { ConflictPolicy } from '../../../src/state/schema.ts'

const AT = new Date('2026-11-20T10:00:00.000Z')
const changed = new Map([['m1', { trigger: 'message_edited', receivedAt: AT }]])
const NOTE = '; changed on the platform after chatferry wrote it (message_edited received 2026-11-20T10:00:00.000Z)'

describe('conflictOf: which intents the conflict policy acts on, and how', () => {
  const edit = (o: Partial<ConflictCandidate> = {}): ConflictCandidate => ({
    kind: 'message.edit',
    policy: 'apply',
    targetKey: 'm1',
    reason: 'text',
    ...o,
  })
  it.each<[string, ConflictCandidate, ConflictPolicy, ReturnType<typeof conflictOf>]>([
    ['report holds it back', edit(), 'report', { outcome: 'conflict', reason: `text${NOTE}` }],
    ['platform-wins drops it', edit(), 'platform-wins', { outcome: 'dropped', reason: `text${NOTE}` }],
    ['source-wins sends it over the platform’s change', edit(), 'source-wins', { outcome: 'overwrites', reason: `text${NOTE}` }],
    ['an item not changed on the platform', edit({ targetKey: 'm2' }), 'report', undefined],
    ['a reported change is never sent', edit({ policy: 'report' }), 'report', undefined],
    ['an ignored change neither', edit({ policy: 'ignore' }), 'platform-wins', undefined],
    ['an unchangeable field cannot be sent', edit({ kind: 'message.unchangeable' }), 'report', undefined],
  ])('%s', (_name, intent, policy, expected) => {
    expect(conflictOf(intent, changed, policy)).toEqual(expected)
  })
})

describe('the dry run’s tally', () => {
  it('collectingClassifier keeps every intent the classifier returns, with its item’s keys, and returns the verdict unchanged', () => {
    const verdict = { intents: [{ kind: 'message.edit' as const, body: { text: 'x' }, policy: 'apply' as const, reason: 'text' }], advance: true }
    const c = collectingClassifier(() => verdict)
    expect(c.classify({ legacyId: '1', targetKey: 'm1', before: {}, after: {} })).toBe(verdict)
    expect(c.found).toEqual([{ kind: 'message.edit', policy: 'apply', legacyId: '1', targetKey: 'm1', reason: 'text' }])
  })

  it('tallyOne counts by kind and outcome and keeps the first samples', () => {
    const tally: ConflictTally = {}
    for (let i = 0; i < UPDATE_SAMPLES + 2; i++) {
      tallyOne(tally, 'message.edit', 'conflict', { legacyId: String(i), targetKey: `m${i}`, reason: 'r' })
    }
    tallyOne(tally, 'group.update', 'conflict', { legacyId: 'g', targetKey: 'g', reason: 'r' })
    expect(tally['message.edit']?.conflict?.count).toBe(UPDATE_SAMPLES + 2)
    expect(tally['message.edit']?.conflict?.samples.map((s) => s.legacyId)).toEqual(['0', '1', '2', '3', '4'])
    expect(tally['group.update']?.conflict?.count).toBe(1)
  })
})

describe('the report’s conflict rows', () => {
  const none = { conflicts: {} }
  const report = {
    entities: {
      users: none,
      groups: { conflicts: { 'group.update': { dropped: { count: 1, samples: [{ legacyId: 'r1', targetKey: 'g1', reason: `name${NOTE}` }] } } } },
      members: none,
      messages: {
        conflicts: { 'message.edit': { overwrites: { count: 2, samples: [{ legacyId: '1', targetKey: 'm1', reason: `text${NOTE}` }] } } },
      },
    },
  } as unknown as PlanReport

  it('one row per entity, kind and outcome, in entity order, with what the delta would do', () => {
    expect(conflictRows(report).map((r) => [r.entity, r.kind, r.outcome, r.count.count])).toEqual([
      ['groups', 'group.update', 'dropped (changes.conflicts: platform-wins)', 1],
      ['messages', 'message.edit', 'overwrites a change made on the platform (changes.conflicts: source-wins)', 2],
    ])
    expect(conflictRows({ entities: { users: none, groups: none, members: none, messages: none } } as unknown as PlanReport)).toEqual([])
  })
})

describe('the report schema keeps older reports readable', () => {
  const older = {
    sourceRows: 0,
    items: 0,
    fates: { new: 0, pending: 0, pendingChanged: 0, replanned: 0, loadedUnchanged: 0, loadedChanged: 0 },
    toCreate: 0,
    alreadyPresent: null,
    changedFields: {},
    skipped: { total: 0, byReason: {} },
    rejected: { total: 0, byReason: {} },
    outcomes: {},
    referential: {},
    extras: {},
    changedSincePrevious: null,
    samples: {},
    cost: { requests: 0, seconds: 0 },
  }
  it('an entity written before the conflict preview reads as none (schema version 1, a field added)', () => {
    expect(EntityPlan.parse(older).conflicts).toEqual({})
  })
  it('an outcome the policy cannot give is refused', () => {
    const bad = { ...older, conflicts: { 'message.edit': { applied: { count: 1, samples: [] } } } }
    expect(EntityPlan.safeParse(bad).success).toBe(false)
  })
})
