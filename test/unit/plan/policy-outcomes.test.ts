/**
 * Unit tests of the connector's policy outcomes (`SourceRow.outcomes`): `mapPage` counts them into
 * the run's policy outcomes and the entity's (with samples), beside the mappings' own, for good
 * rows and problems alike, whatever the mapping then does; the plan summary prints them.
 */
import { describe, expect, it } from 'vitest'

import { defaultPolicies } from '../../../mappings/index.ts'
import type { SourceRow, SourceSession } from '../../../src/model/connector.ts'
import type { LegacyRecordOf, LegacyUser } from '../../../src/model/records.ts'
import { formatPlanSummary } from '../../../src/plan/format-plan-summary.ts'
import { mapPage } from '../../../src/plan/map-page.ts'
import type { PlanJobSummary, PlanSink } from '../../../src/plan/plan-job.ts'
import { startPlanRun } from '../../../src/plan/plan-run.ts'
import type { PlanRun } from '../../../src/plan/plan-types.ts'
import { countOutcomes } from '../../../src/plan/policy-outcomes.ts'

const NOW = Date.UTC(2026, 0, 1)

async function run(): Promise<PlanRun> {
  const sink = { resumable: true, loadIds: async () => [], loadUsers: async () => new Map(), loadGroups: async () => new Map() }
  return startPlanRun({ jobId: 'j', session: {} as SourceSession, policies: defaultPolicies(), now: NOW, sink: sink as unknown as PlanSink })
}

const user = (id: string, o: Partial<LegacyUser> = {}): LegacyUser => ({ id, name: `User ${id}`, isBot: false, createdAt: NOW - 1000, ...o })
type Row = SourceRow<LegacyRecordOf['users']>

describe('countOutcomes', () => {
  it.each<{ name: string; outcomes: { policy: string; outcome: string }[] | undefined; want: Record<string, Record<string, number>> }>([
    { name: 'none', outcomes: undefined, want: {} },
    { name: 'empty', outcomes: [], want: {} },
    { name: 'one', outcomes: [{ policy: 'customFields', outcome: 'dropped' }], want: { customFields: { dropped: 1 } } },
    {
      name: 'two of one policy, one of another',
      outcomes: [
        { policy: 'customFields', outcome: 'in-metadata' },
        { policy: 'customFields', outcome: 'in-metadata' },
        { policy: 'pinned', outcome: 'in-metadata' },
      ],
      want: { customFields: { 'in-metadata': 2 }, pinned: { 'in-metadata': 1 } },
    },
  ])('$name', ({ outcomes, want }) => {
    const into: Record<string, Record<string, number>> = { customFields: {} }
    const entity = {}
    countOutcomes(outcomes, 'x1', into, entity)
    expect(Object.fromEntries(Object.entries(into).filter(([, v]) => Object.keys(v).length > 0))).toEqual(want)
    const flat = Object.entries(want).flatMap(([p, os]) =>
      Object.entries(os).map(([o, n]) => [`${p}: ${o}`, { count: n, samples: Array(n).fill('x1') }]),
    )
    expect(entity).toEqual(Object.fromEntries(flat))
  })
})

describe('mapPage counts the outcomes a connector reports with its rows', () => {
  it('good rows and problems, beside the mappings own outcomes', async () => {
    const r = await run()
    const rows: Row[] = [
      { ok: true, record: user('a'), outcomes: [{ policy: 'nonChatParticipants', outcome: 'user-created' }] },
      { ok: true, record: user('b') },
      // a bot: the mappings count their own outcome (bots: kept) beside the connector's
      { ok: true, record: user('c', { isBot: true }), outcomes: [{ policy: 'nonChatParticipants', outcome: 'user-created' }] },
      {
        ok: false,
        legacyId: 'd',
        field: 'messaging_binding',
        reason: 'dropped',
        outcomes: [{ policy: 'nonChatParticipants', outcome: 'member-dropped' }],
      },
      { ok: false, legacyId: 'e', field: 'identity', reason: 'no identity' },
    ]
    const summary = r.entities.users
    mapPage(r, 'users', rows, summary)
    expect(r.outcomes.nonChatParticipants).toEqual({ 'user-created': 2, 'member-dropped': 1 })
    expect(r.outcomes.bots).toEqual({ kept: 1 })
    expect(summary.outcomes['nonChatParticipants: user-created']).toEqual({ count: 2, samples: ['a', 'c'] })
    expect(summary.outcomes['nonChatParticipants: member-dropped']).toEqual({ count: 1, samples: ['d'] })
    expect(summary.problems).toBe(2)

    const text = formatPlanSummary({ entities: { users: summary }, outcomes: r.outcomes } as unknown as PlanJobSummary)
    expect(text).toContain('policy outcomes:\n')
    expect(text).toContain('  nonChatParticipants: user-created 2, member-dropped 1\n')
    expect(text).toContain('  bots: kept 1\n')
  })

  it('a page whose rows report nothing adds no policy', async () => {
    const r = await run()
    mapPage(r, 'users', [{ ok: true, record: user('a') }], r.entities.users)
    expect(r.outcomes).toEqual({})
    expect(r.entities.users.outcomes).toEqual({})
  })
})
