/**
 * Unit tests of the report code: `--fail-on` gates, the report's identity without secrets, what
 * changed in an item, and the diff of two plans.
 */
import { describe, expect, it } from 'vitest'

import { parseConfig } from '../../../src/job/config.ts'
import { withoutSecrets } from '../../../src/logger.ts'
import { changedFields } from '../../../src/plan/dry-run.ts'
import { evaluateGates, parseGates } from '../../../src/report/fail-on.ts'
import { configHash } from '../../../src/report/meta.ts'
import { diffPlans } from '../../../src/report/plan-report.ts'
import { type EntityPlan, PlanReport } from '../../../src/report/schema.ts'

/** A small, valid plan report. */
function entity(toCreate: number, rejected: number, o: Partial<EntityPlan> = {}): EntityPlan {
  return {
    sourceRows: toCreate + rejected,
    records: toCreate,
    problems: rejected,
    sourceCount: toCreate + rejected,
    items: toCreate,
    fates: { new: toCreate, pending: 0, pendingChanged: 0, replanned: 0, loadedUnchanged: 0, loadedChanged: 0 },
    toCreate,
    alreadyPresent: null,
    changedFields: {},
    skipped: { total: 0, byReason: {} },
    rejected: {
      total: rejected,
      byReason: rejected ? { 'unreadable createat': { count: rejected, samples: ['m1'] } } : {},
      samples: rejected ? { 'unreadable createat': [{ legacyId: 'm1', targetKey: '~legacy:m1', field: 'createat', problem: 'not a time' }] } : {},
    },
    outcomes: {},
    referential: {},
    extras: {},
    changedSincePrevious: null,
    samples: {},
    cost: { requests: toCreate ? 1 : 0, seconds: toCreate ? 1 : 0 },
    updates: {},
    conflicts: {},
    vanished: null,
    vanishedRefused: false,
    ...o,
  }
}

function samplePlanReport(o: { messages?: number; rejected?: number; runId?: string } = {}): PlanReport {
  return PlanReport.parse({
    schemaVersion: 1,
    kind: 'plan',
    runId: o.runId ?? 'plan-20261121T120000Z-00000001',
    jobId: 'job',
    appId: 'app',
    region: 'us',
    chatferryVersion: '0.1.0',
    configHash: '0'.repeat(64),
    sourceSnapshotAt: '2026-11-21T12:00:00.000Z',
    generatedAt: '2026-11-21T12:00:01.000Z',
    durationMs: 1000,
    policies: {},
    entities: { users: entity(3, 0), groups: entity(2, 0), members: entity(0, 0), messages: entity(o.messages ?? 6, o.rejected ?? 3) },
    ids: { normalised: 0, collisions: { count: 0, samples: [] } },
    placeholders: { count: 0, messages: 0, top: [] },
    joinedAt: { clamped: { count: 0, samples: [] }, omitted: { count: 0, samples: [] }, rejected: 0 },
    retention: { retentionDays: 183, oldMessages: 'skip', windowStart: '2026-05-22T12:00:00.000Z', beyondRetention: 0, months: [] },
    cost: {
      quota: { requestsPerMinute: 60, itemsPerRequest: 50, source: 'test' },
      requests: 3,
      seconds: 3,
      startIfNow: '2026-11-21T12:00:01.000Z',
      finishIfNow: '2026-11-21T12:00:04.000Z',
      timeline: [],
    },
    policyOutcomes: {},
    target: null,
    diff: null,
    gates: [],
  })
}

describe('plan --fail-on gates', () => {
  it.each([
    ['rejected>0', { metric: 'rejected', entity: undefined, op: '>', threshold: 0 }],
    ['rejected.messages>=10', { metric: 'rejected', entity: 'messages', op: '>=', threshold: 10 }],
    [' hours > 48 ', { metric: 'hours', entity: undefined, op: '>', threshold: 48 }],
    ['placeholders=0', { metric: 'placeholders', entity: undefined, op: '==', threshold: 0 }],
    ['create.users<1.5', { metric: 'create', entity: 'users', op: '<', threshold: 1.5 }],
  ])('parses %s', (expression, want) => {
    expect(parseGates([expression])[0]).toMatchObject(want)
  })

  it.each([
    { name: 'counted as read', sourceCount: 9 as number | null, want: 0 },
    { name: 'two rows the read missed', sourceCount: 11, want: 2 },
    { name: 'one row read twice', sourceCount: 8, want: 1 },
    { name: 'not counted', sourceCount: null, want: 0 },
  ])('countMismatch: $name', ({ sourceCount, want }) => {
    const report = samplePlanReport()
    report.entities.messages.sourceCount = sourceCount
    const [gate] = evaluateGates(report, parseGates(['countMismatch.messages>0']))
    expect(gate).toEqual({ expression: 'countMismatch.messages>0', value: want, passed: want === 0 })
  })

  it('splits on commas and ignores empty parts', () => {
    expect(parseGates(['rejected>0,skipped>5', '']).map((g) => g.expression)).toEqual(['rejected>0', 'skipped>5'])
  })

  it.each([
    ['rejected>>1', /expected <metric>/],
    ['bogus>1', /unknown metric bogus/],
    ['rejected.threads>1', /unknown entity threads/],
    ['rejected>', /expected <metric>/],
  ])('refuses %s', (expression, message) => {
    expect(() => parseGates([expression])).toThrow(message)
  })

  it('evaluates against the report: a gate fails when its expression holds', () => {
    const report = samplePlanReport()
    const gates = evaluateGates(report, parseGates(['rejected>0', 'rejected.users>0', 'create>=11', 'hours>1', 'requests==3']))
    expect(gates.map((g) => [g.expression, g.value, g.passed])).toEqual([
      ['rejected>0', 3, false],
      ['rejected.users>0', 0, true],
      ['create>=11', 11, false],
      ['hours>1', 3 / 3600, true],
      ['requests==3', 3, false],
    ])
  })
})

const CONFIG = (apiKey: string, password: string, pageSize = 1000) => `
target: { appId: demo, region: us, apiKey: ${apiKey} }
management: { key: mk-${apiKey}, secret: ms-${apiKey} }
state: { url: "postgres://chatferry:${password}@db.example.com/ledger" }
source: { connector: mattermost, url: "postgres://mm:${password}@mm.example.com/mattermost", pageSize: ${pageSize} }
`

describe('report identity without secrets', () => {
  it('removes api keys, management credentials and URL credentials', () => {
    const config = parseConfig(CONFIG('k-0123456789abcdef', 'Pa55word'), '/x/chatferry.yaml')
    const text = JSON.stringify(withoutSecrets(config))
    expect(text).not.toContain('k-0123456789abcdef')
    expect(text).not.toContain('Pa55word')
    expect(text).not.toContain('chatferry:')
    expect(text).toContain('db.example.com')
  })

  it('hashes the settings, not the secrets or the file path', () => {
    const a = configHash(parseConfig(CONFIG('k-aaaaaaaaaaaa', 'one'), '/x/a.yaml'))
    const b = configHash(parseConfig(CONFIG('k-bbbbbbbbbbbb', 'two'), '/y/b.yaml'))
    const c = configHash(parseConfig(CONFIG('k-aaaaaaaaaaaa', 'one', 500), '/x/a.yaml'))
    expect(a).toMatch(/^[0-9a-f]{64}$/)
    expect(a).toBe(b)
    expect(a).not.toBe(c)
  })

  it('keeps policy choices whose names look like secret keys, so they count in the hash', () => {
    const base = CONFIG('k-aaaaaaaaaaaa', 'one')
    const shown = JSON.stringify(withoutSecrets(parseConfig(`${base}policies: { legacyMetadata: { key: chatferry } }`, '/x/a.yaml')))
    expect(shown).toContain('"key":"chatferry"')
    const passwordGroups = configHash(parseConfig(`${base}policies: { groupTypes: { password: password } }`, '/x/a.yaml'))
    const privateGroups = configHash(parseConfig(`${base}policies: { groupTypes: { password: private } }`, '/x/a.yaml'))
    expect(passwordGroups).not.toBe(privateGroups)
  })
})

describe('what changed', () => {
  it.each([
    [{ a: 1, b: 2 }, { a: 1, b: 3 }, ['b']],
    [{ data: { text: 'x', metadata: { legacy: { id: 1 } } } }, { data: { text: 'y', metadata: { legacy: { id: 1 } } } }, ['data.text']],
    [{ name: 'n' }, { name: 'n', tags: ['t'] }, ['tags']],
    [{ data: { text: 'x' } }, { data: { text: 'x' } }, []],
  ])('%j → %j', (before, after, fields) => {
    expect(changedFields(before, after)).toEqual(fields)
  })

  it('diffs two plans of a job: counts, reasons, sentences', () => {
    const before = samplePlanReport({ messages: 6, rejected: 3, runId: 'plan-a' })
    const after = samplePlanReport({ messages: 9, rejected: 5, runId: 'plan-b' })
    after.entities.messages.changedSincePrevious = { count: 3, samples: ['m7', 'm8', 'm9'] }
    const d = diffPlans(before, after)
    expect(d.previousRunId).toBe('plan-a')
    expect(d.entities.messages).toMatchObject({ sourceRows: 5, toCreate: 3, rejected: 2, rejectedByReason: { 'unreadable createat': 2 } })
    expect(d.entities.users).toMatchObject({ sourceRows: 0, toCreate: 0, rejected: 0, rejectedByReason: {} })
    expect(d.lines).toEqual([
      'messages: +5 source rows, +3 to create, +2 rejected (unreadable createat), 3 changed or added since the previous snapshot (e.g. m7, m8, m9)',
    ])
    expect(diffPlans(before, before).lines).toEqual(['no change'])
  })
})
