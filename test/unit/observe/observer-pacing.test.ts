/**
 * The observers of a running migration are paced by what their ledger reading costs
 * (src/paced-reading.ts), so that on a large job (a counts scan of 3.5 s at 1M items) a scrape or
 * an open dashboard never takes more than 1/20 of the ledger's core: the job's and the fleet's
 * metrics registries (one reading serves every scrape for 20 times what it took), and the
 * dashboard's sampler (it reads again only when that gap has passed, and says how often it reads).
 * Before, a scrape read the ledger again 0.5 s after the last reading ended and the dashboard at
 * every refresh, back to back when a reading outlasted the refresh.
 */
import { expect, it } from 'vitest'

import type { LedgerRead, LedgerSource } from '../../../src/cli/dashboard/ledger-source.ts'
import { startSampler } from '../../../src/cli/dashboard/sampler.ts'
import type { StatusReadings } from '../../../src/cli/status-readings.ts'
import { createFleetMetrics } from '../../../src/fleet/fleet-metrics.ts'
import { createLoaderMetrics } from '../../../src/load/metrics.ts'
import type { JobMetricsReading } from '../../../src/load/metrics-reading.ts'

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

/** A reading that takes `ms` of real time and counts its calls. */
function slow<T>(value: T, ms: number): { read: () => Promise<T>; calls: () => number } {
  let calls = 0
  return {
    read: async () => {
      calls++
      await sleep(ms)
      return value
    },
    calls: () => calls,
  }
}

const jobReading: JobMetricsReading = { stats: [], files: undefined, watermarks: new Map(), lastDelta: undefined }

it.each([
  {
    name: "a job's registry",
    make: (read: () => Promise<JobMetricsReading>) =>
      createLoaderMetrics({ jobId: 'j', appId: 'a', quota: { requestsPerMinute: 60, itemsPerRequest: 50 }, read }),
    value: jobReading,
  },
  {
    name: "a fleet's registry",
    make: (read: () => Promise<unknown>) => createFleetMetrics({ fleetId: 'f', read: read as never }),
    value: { tenants: [], stats: new Map() },
  },
])('$name: a reading of 100 ms or more serves the scrapes of the next 2 s or more', async ({ make, value }) => {
  const s = slow(value, 100)
  const metrics = make(s.read as never)
  try {
    await metrics.registry.metrics()
    expect(s.calls()).toBe(1)
    // 0.8 s after the first reading began: past the old 0.5 s after its end, within 20 × ≥ 100 ms.
    await sleep(700)
    await metrics.registry.metrics()
    expect(s.calls()).toBe(1)
  } finally {
    metrics.close()
  }
})

const readings: StatusReadings = {
  jobs: [{ id: 'j', appId: 'a' }],
  entityStats: [],
  runs: [],
  openMessagesPerMinute: [],
  updateCounts: [],
  updateConflicts: [],
  fileCounts: { planned: 0, copied: 0, failed: 0, skipped: 0, copiedBytes: 0, plannedBytes: 0, failedWaiting: 0, waitingMessages: 0 },
  rejects: [],
}
const config = {
  target: { appId: 'a', quota: { requestsPerMinute: 60, itemsPerRequest: 50 }, chatQuota: { requestsPerMinute: 1000 } },
  policies: { retention: { retentionDays: 365, oldMessages: 'skip' } },
} as never

it('the dashboard reads a slow ledger every 20 × what a reading takes, not at every refresh, and says so', async () => {
  const s = slow<LedgerRead>({ readings, via: 'Postgres ledger' }, 100)
  const source: LedgerSource = { read: s.read, close: async () => {} }
  const sampler = startSampler(source, 'j', config, 200)
  try {
    await sampler.refresh()
    expect(sampler.current()?.via).toMatch(/^Postgres ledger; read every \d+ s \(a reading is slow on a job this size\)$/)
    // Ten refresh intervals: one reading more at most (20 × ≥ 100 ms ≥ 2 s); a point per reading.
    await sleep(2000)
    expect(s.calls()).toBeLessThanOrEqual(2)
    // A point per reading that ended (a second may still be under way).
    expect(sampler.current()?.series.length).toBeGreaterThanOrEqual(1)
    expect(sampler.current()?.series.length).toBeLessThanOrEqual(s.calls())
  } finally {
    sampler.stop()
  }
})

it('a fast ledger is read at every refresh, as before', async () => {
  const s = slow<LedgerRead>({ readings, via: 'Postgres ledger' }, 0)
  const sampler = startSampler({ read: s.read, close: async () => {} }, 'j', config, 100)
  try {
    await sampler.refresh()
    await sleep(1500)
    expect(s.calls()).toBeGreaterThanOrEqual(2)
    expect(sampler.current()?.via).toBe('Postgres ledger')
  } finally {
    sampler.stop()
  }
})
