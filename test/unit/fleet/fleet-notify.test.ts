/** Which tenant ends `fleet run` tells the hooks about (`fleet.tenant.needs-fix`), as a table. */
import { describe, expect, it } from 'vitest'

import { tenantNeedsFixNotification } from '../../../src/fleet/fleet-notify.ts'
import type { TenantOutcome } from '../../../src/fleet/fleet-run-outcome.ts'

const base = { tenantId: 'acme', jobId: 'f1_acme' }

describe('tenantNeedsFixNotification', () => {
  const cases: [string, Pick<TenantOutcome, 'state' | 'needsFix' | 'reason'>, boolean][] = [
    ['done', { state: 'done', needsFix: false }, false],
    ['rejected', { state: 'rejected', needsFix: false }, false],
    ['stopped by a signal', { state: 'stopped', needsFix: false, reason: 'SIGTERM' }, false],
    ['failed, a rerun fixes it (an outage)', { state: 'failed', needsFix: false, reason: 'connect ECONNREFUSED' }, false],
    ['failed, needs a fix', { state: 'failed', needsFix: true, reason: 'answered 401' }, true],
  ]
  it.each(cases)('%s', (_, end, sent) => {
    const n = tenantNeedsFixNotification('f1', { ...base, ...end })
    expect(n !== undefined).toBe(sent)
    if (n !== undefined) {
      expect(n).toEqual({
        event: 'fleet.tenant.needs-fix',
        jobId: 'f1_acme',
        summary: 'fleet f1: tenant acme needs a fix before it can run: answered 401 (then fleet run --tenant acme)',
        details: { fleet: 'f1', tenantId: 'acme', state: 'failed', reason: 'answered 401' },
      })
    }
  })
})
