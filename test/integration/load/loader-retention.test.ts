/**
 * Retention, checked again when a batch is packed: a message planned inside the retention window
 * that aged out before the loader reached it is settled by the retention policy and never sent (on
 * the platform one such row fails its whole request with a 500). Time passing is simulated on both
 * sides alike: the loader's clock runs a day ahead, and the sandbox's window is a day shorter.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { PoliciesSchema } from '../../../mappings/policies.ts'
import { ageOutRule, DEFAULT_RETENTION_POLICY } from '../../../src/load/retention-at-pack.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { auditDeliveries, describeViolations } from '../../helpers/delivery-audit.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_retention')
const DAY = 86_400

/**
 * 60 users and 100 messages five days old, plus 7 "edge" messages nine and a half days old: inside
 * the 10-day window when planned (now), outside it a day later.
 */
async function scenario(name: string, sandboxRetentionDays: number) {
  const app = await fx.sb.createApp({ id: name, settings: { requestsPerMinute: 6000, windowMs: 10_000, retentionDays: sandboxRetentionDays } })
  await fx.store.ensureJob(name, app.id)
  await fx.store.planItems(name, 'users', users(60))
  const now = Math.floor(Date.now() / 1000)
  const edge = messages(7, 60, 'edge', now - Math.floor(9.5 * DAY))
  await fx.store.planItems(name, 'messages', [...edge, ...messages(100, 60, 'm', now - 5 * DAY)])
  return { app, edgeKeys: new Set(edge.map((m) => m.targetKey as string)) }
}

const load = (name: string, app: { id: string; baseUrl: string; apiKey: string }, oldMessages: 'skip' | 'send') =>
  loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId: name,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: 6000,
    settings: { quotaWindowMs: 10_000 },
    retention: { retentionDays: 10, oldMessages },
    now: () => Date.now() + DAY * 1000,
  })

describe('retention at pack time', () => {
  it('ageOutRule: skip gives the cutoff and the policy reason; send checks nothing', () => {
    const now = 1_800_000_000_000
    expect(ageOutRule({ retentionDays: 10, oldMessages: 'skip' }, now, 0)).toEqual({
      sentBefore: now / 1000 - 10 * DAY,
      reason: expect.stringMatching(/^policy:retention: older than 10 days \(retention.oldMessages: skip\)/),
    })
    expect(ageOutRule({ retentionDays: 10, oldMessages: 'skip' }, now, 600_000)?.sentBefore).toBe(now / 1000 - 10 * DAY + 600)
    expect(ageOutRule({ retentionDays: 10, oldMessages: 'send' }, now, 600_000)).toBeUndefined()
  })

  it("a loader given no policy uses policies.retention's defaults", () => {
    const { retentionDays, oldMessages } = PoliciesSchema.parse({}).retention
    expect(DEFAULT_RETENTION_POLICY).toEqual({ retentionDays, oldMessages })
  })

  it('oldMessages: skip: a message that aged out since planning is skipped by policy, and no request carries it', async () => {
    const { app, edgeKeys } = await scenario('aged-skip', 9)
    const out = await load('aged-skip', app, 'skip')
    expect(out.status).toBe('done')
    expect(out.counters.itemsAgedOut).toBe(7)
    const stats = (await fx.store.entityStats('aged-skip')).find((s) => s.entity === 'messages')
    expect(stats).toMatchObject({ done: 100, skipped: 7, rejected: 0, remaining: 0 })
    const skipped = await sql<{ target_key: string; last_error_message: string }>`
      select target_key, last_error_message from chatferry.items where job_id = 'aged-skip' and status = 'skipped'`.execute(inspectLedger(fx.store))
    expect(new Set(skipped.rows.map((r) => r.target_key))).toEqual(edgeKeys)
    for (const r of skipped.rows) {
      expect(r.last_error_message).toMatch(/^policy:retention: older than 10 days/)
    }
    await fx.sb.whenIdle()
    const log = await fx.sb.requests(app.id)
    const carrying = log.filter((r) => r.items?.some((i) => edgeKeys.has(i.key)))
    expect(carrying).toEqual([])
    expect(log.filter((r) => r.status !== 200)).toEqual([])
    const report = await auditDeliveries({
      sb: fx.sb,
      appId: app.id,
      ledger: inspectLedger(fx.store),
      jobId: 'aged-skip',
      kills: 0,
      concurrency: 4,
      timeoutMs: 3000,
    })
    expect(report.violations, describeViolations(report)).toEqual([])
  })

  it('oldMessages: send (extended retention): the same messages are sent, as at planning', async () => {
    const { app, edgeKeys } = await scenario('aged-send', 3650)
    const out = await load('aged-send', app, 'send')
    expect(out.status).toBe('done')
    expect(out.counters.itemsAgedOut).toBe(0)
    const stats = (await fx.store.entityStats('aged-send')).find((s) => s.entity === 'messages')
    expect(stats).toMatchObject({ done: 107, skipped: 0, rejected: 0 })
    await fx.sb.whenIdle()
    const carried = new Set((await fx.sb.requests(app.id)).flatMap((r) => (r.items ?? []).map((i) => i.key)))
    for (const k of edgeKeys) {
      expect(carried.has(k), k).toBe(true)
    }
  })
})
