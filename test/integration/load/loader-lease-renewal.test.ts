/**
 * Lease renewal through the loader: batches held longer than `load.leaseSeconds` (a slow platform,
 * requests taking most of the lease, and a batch claimed ahead waiting for them) keep their lease,
 * so none is handed back for a short lease and no settlement is fenced out; every item loads once.
 */
import { describe, expect, it } from 'vitest'

import { users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_lease')

describe('lease renewal', () => {
  it('a batch held past its lease (7 s requests, an 11 s lease, one claimed ahead) is renewed, not lost', async () => {
    const app = await fx.sb.createApp({
      id: 'slow',
      settings: { requestsPerMinute: 1000, windowMs: 10_000, faults: { latencyMs: { min: 7000, max: 7000 }, seed: 1 } },
    })
    await fx.store.ensureJob('slow', app.id)
    await fx.store.planItems('slow', 'users', users(100))
    const startedAt = Date.now()
    const out = await loadOnce({
      store: fx.store,
      stateUrl: fx.tdb.url,
      jobId: 'slow',
      appId: app.id,
      baseUrl: app.baseUrl,
      apiKey: app.apiKey,
      requestsPerMinute: 6000,
      timeoutMs: 8000,
      settings: { leaseSeconds: 11, concurrency: 1, quotaWindowMs: 10_000 },
    })
    expect(out.status).toBe('done')
    // The second batch was held from its claim (while the first was in flight) to its settlement:
    // longer than one lease, which without renewal hands it back (LEASE_EXPIRING) or fences it out.
    expect(Date.now() - startedAt).toBeGreaterThan(11_000)
    expect(out.counters.batchesReleased).toBe(0)
    expect(out.counters.fenced).toBe(0)
    expect(out.counters.requests).toBe(2)
    const keys = await sandboxKeys(fx.sb, app.id, 'users')
    expect(keys.size).toBe(100)
    expect([...keys.values()].every((n) => n === 1)).toBe(true)
  }, 90_000)
})
