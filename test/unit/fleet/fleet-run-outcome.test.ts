/** The fleet's exit code, a failure's "needs a fix", a tenant's state in `fleet status`, and the fleet plan totals (pure). */
import { describe, expect, it } from 'vitest'

import { ChatferryError, ConfigError } from '../../../src/errors.ts'
import { fleetExitCode, needsFix } from '../../../src/fleet/fleet-run-outcome.ts'
import { stateOf } from '../../../src/fleet/fleet-status.ts'
import { FatalLoadError } from '../../../src/load/fatal-load-error.ts'
import { buildFleetPlanReport, failedPlanRow } from '../../../src/report/fleet-plan-report.ts'
import type { RunRecord } from '../../../src/state/store.ts'
import { PlatformError } from '../../../src/target/errors.ts'

const refused = (status: number) => new PlatformError({ operation: 'data_import.users', kind: 'http', status, code: 'AUTH_ERR', message: 'no' })

describe('fleetExitCode', () => {
  it.each([
    ['every tenant done', [{ state: 'done', needsFix: false }], 0],
    ['no tenant at all', [], 0],
    [
      'one with rejects',
      [
        { state: 'done', needsFix: false },
        { state: 'rejected', needsFix: false },
      ],
      3,
    ],
    [
      'one failed, rerunnable',
      [
        { state: 'rejected', needsFix: false },
        { state: 'failed', needsFix: false },
      ],
      1,
    ],
    [
      'one stopped by a signal',
      [
        { state: 'done', needsFix: false },
        { state: 'stopped', needsFix: false },
      ],
      1,
    ],
    [
      'one needs a fix, another rerunnable',
      [
        { state: 'failed', needsFix: false },
        { state: 'failed', needsFix: true },
      ],
      2,
    ],
  ] as const)('%s → %i', (_, outcomes, code) => {
    expect(fleetExitCode(outcomes)).toBe(code)
  })
})

describe('needsFix', () => {
  it.each([
    ['a configuration problem', new ConfigError('fleet.yaml', [{ path: 'tenants[0].source', message: 'x' }]), true],
    ['a source that refuses the query', new ChatferryError('SOURCE_INVALID', 'no table'), true],
    ['a delta before the full read', new ChatferryError('DELTA_BEFORE_FULL_READ', 'run first'), true],
    ['an unreachable source', new ChatferryError('SOURCE_UNAVAILABLE', 'ECONNREFUSED'), false],
    ['a key refused mid-load', new FatalLoadError('stop', { cause: refused(401) }), true],
    ['an app the platform does not know', refused(404), true],
    ['an outage', new FatalLoadError('gave up after 600 s'), false],
    ['anything else', new Error('boom'), false],
  ])('%s → %s', (_, err, expected) => {
    expect(needsFix(err)).toBe(expected)
  })
})

const run = (over: Partial<RunRecord>): RunRecord => ({
  id: 1,
  jobId: 'f_t',
  mode: 'run',
  status: 'running',
  owner: 'host/1/fleet-run',
  startedAt: new Date(0),
  heartbeatAt: new Date(0),
  finishedAt: null,
  stats: {},
  error: null,
  ...over,
})
const alive = () => undefined
const dead = () => 'its process is gone'

describe('stateOf', () => {
  it.each([
    ['no run, nothing loading', undefined, [], 0, alive, 'not started'],
    ['no run, a live worker with work', undefined, [run({ mode: 'worker' })], 5, alive, 'loading'],
    ['a live run still planning', run({}), [], 5, alive, 'planning'],
    ['a live run past its plan', run({ stats: { plan: {} } }), [], 5, alive, 'loading'],
    ['a dead run', run({}), [], 5, dead, 'interrupted'],
    ['succeeded', run({ status: 'succeeded' }), [], 0, alive, 'done'],
    ['rejected', run({ status: 'rejected' }), [], 0, alive, 'rejected'],
    ['failed', run({ status: 'failed', error: 'x' }), [], 0, alive, 'failed'],
    ['interrupted, a worker still loading', run({ status: 'interrupted' }), [run({ mode: 'worker', id: 2 })], 3, alive, 'loading'],
    ['interrupted, nothing loading', run({ status: 'interrupted' }), [], 3, alive, 'interrupted'],
  ] as const)('%s → %s', (_, fleetRun, runs, remaining, deadReason, state) => {
    expect(stateOf(fleetRun, runs, remaining, deadReason)).toBe(state)
  })
})

describe('buildFleetPlanReport', () => {
  it('sums the tenants, takes the slowest tenant as the fleet time, and counts rejects by reason across tenants', () => {
    const quota = { requestsPerMinute: 60, itemsPerRequest: 50 }
    const row = (tenantId: string, seconds: number, requests: number, rejects: Record<string, number>) => ({
      ...failedPlanRow({ tenantId, jobId: `f_${tenantId}`, appId: tenantId, region: 'us', quota }, ''),
      status: 'planned' as const,
      error: null,
      toCreate: { users: 10, groups: 1, members: 10, messages: 100 },
      rejected: Object.values(rejects).reduce((a, b) => a + b, 0),
      rejectsByReason: rejects,
      requests,
      seconds,
    })
    const r = buildFleetPlanReport(
      'f',
      [
        row('a', 60, 60, { 'text: too long': 2 }),
        row('b', 120, 120, { 'text: too long': 1, 'sender: unknown': 4 }),
        failedPlanRow({ tenantId: 'c', jobId: 'f_c', appId: 'c', region: 'eu', quota }, 'unreachable'),
      ],
      0,
      1000,
    )
    expect(r.totals).toMatchObject({
      tenants: 3,
      failed: 1,
      toCreate: { users: 20, groups: 2, members: 20, messages: 200 },
      rejected: 7,
      rejectsByReason: { 'text: too long': 3, 'sender: unknown': 4 },
      requests: 180,
      seconds: 120,
      sumSeconds: 180,
    })
  })
})
