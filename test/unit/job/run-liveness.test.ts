import { describe, expect, it } from 'vitest'

import { deadRunReason, RUN_STALE_AFTER_MS, runOwnerProcess } from '../../../src/job/run-liveness.ts'
import type { RunRecord } from '../../../src/state/store.ts'

const NOW = Date.parse('2026-11-24T08:00:00Z')

function run(over: Partial<RunRecord>): RunRecord {
  return {
    id: 1,
    jobId: 'j',
    mode: 'load',
    status: 'running',
    owner: 'here#abc/100/x',
    startedAt: new Date(NOW - 600_000),
    heartbeatAt: new Date(NOW - 1000),
    finishedAt: null,
    stats: {},
    error: null,
    ...over,
  }
}

describe('run liveness', () => {
  it('reads the owners chatferry writes', () => {
    expect(runOwnerProcess('vm#d61fd577/16472/4010fc64')).toEqual({ host: 'vm#d61fd577', pid: 16472 })
    expect(runOwnerProcess('vm#d61fd577/16472/run')).toEqual({ host: 'vm#d61fd577', pid: 16472 })
    // A loader's random id can be all digits: still the role, not the pid.
    expect(runOwnerProcess('vm#d61fd577/16472/49293134')).toEqual({ host: 'vm#d61fd577', pid: 16472 })
    expect(runOwnerProcess('pid:77')).toEqual({ pid: 77 })
    expect(runOwnerProcess('me')).toBeUndefined()
    expect(runOwnerProcess(null)).toBeUndefined()
  })

  it('a running row is dead when its pid on this host is gone, or when it is silent for six heartbeats', () => {
    const alive = (pid: number) => pid === 100
    expect(deadRunReason(run({}), NOW, 'here#abc', alive)).toBeUndefined()
    expect(deadRunReason(run({ owner: 'here#abc/101/x' }), NOW, 'here#abc', alive)).toBe('its process (pid 101 on this machine) is gone')
    // Another machine's pid says nothing here: only the heartbeat counts.
    expect(deadRunReason(run({ owner: 'there#def/101/x' }), NOW, 'here#abc', alive)).toBeUndefined()
    expect(
      deadRunReason(run({ owner: 'there#def/101/x', heartbeatAt: new Date(NOW - RUN_STALE_AFTER_MS + 1000) }), NOW, 'here#abc', alive),
    ).toBeUndefined()
    expect(deadRunReason(run({ owner: 'there#def/101/x', heartbeatAt: new Date(NOW - 45_000) }), NOW, 'here#abc', alive)).toBe(
      'no heartbeat for 45 s (last 2026-11-24T07:59:15.000Z)',
    )
    // An ended run is never called dead.
    expect(deadRunReason(run({ status: 'succeeded', owner: 'here#abc/101/x', heartbeatAt: new Date(0) }), NOW, 'here#abc', alive)).toBeUndefined()
  })
})
