/**
 * The loader against the sandbox over HTTP with its fault knobs: whatever the faults, the delivery
 * audit (what the sandbox received) shows every item created exactly once, nothing lost, and no
 * item sent again after the platform had answered it (no process is killed here, so the bound is
 * zero: a re-send must follow a request that gave no per-item answer). The quota holds, a
 * poison item is isolated, and a failing ledger is ridden out (its claims refused with a transient
 * error, a claim's answer lost after it committed) up to `load.giveUpAfterMs`, while a permanent
 * error of the ledger stops the loader at once.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import type { AppSettingsPatch } from '../../../src/sandbox/index.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { Entity } from '../../../src/target/schemas.ts'
import { auditDeliveries, type AuditReport, describeViolations } from '../../helpers/delivery-audit.ts'
import { connectionReset, failOnce, refuseLedgerWrites } from '../../helpers/ledger-faults.ts'
import { groups, members, messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, maxInWindow, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_loader')

/** A fresh app and job with a full little migration planned: 60 users, 4 groups, 60 members, `nMsg` messages. */
async function scenario(name: string, settings: AppSettingsPatch, nMsg = 400) {
  const app = await fx.sb.createApp({ id: name, settings: { requestsPerMinute: 1000, windowMs: 10_000, ...settings } })
  await fx.store.ensureJob(name, app.id)
  const planned: Record<Entity, number> = { users: 60, groups: 4, members: 60, messages: nMsg }
  await fx.store.planItems(name, 'users', users(60))
  await fx.store.planItems(name, 'groups', groups(4))
  await fx.store.planItems(name, 'members', members(60, 4))
  await fx.store.planItems(name, 'messages', messages(nMsg, 60))
  return { app, planned }
}

/** The delivery audit of a run without kills: bound zero (the harness's request timeout is 3 s). */
async function audit(appId: string, jobId: string): Promise<AuditReport> {
  const report = await auditDeliveries({ sb: fx.sb, appId, ledger: inspectLedger(fx.store), jobId, kills: 0, concurrency: 4, timeoutMs: 3000 })
  expect(report.violations, describeViolations(report)).toEqual([])
  return report
}

/** Every item done and in the sandbox, and the audit clean; returns the audit. */
async function expectExact(appId: string, jobId: string, planned: Record<Entity, number>): Promise<AuditReport> {
  const stats = await fx.store.entityStats(jobId)
  for (const s of stats) {
    expect(s.done, `${s.entity} done`).toBe(planned[s.entity])
    expect(s.remaining, `${s.entity} remaining`).toBe(0)
    const keys = await sandboxKeys(fx.sb, appId, s.entity)
    expect(keys.size, `${s.entity} in the sandbox`).toBe(planned[s.entity])
  }
  return audit(appId, jobId)
}

/** A run that met no fault: not one item went twice, not one "already exists". */
function expectNoResend(report: AuditReport) {
  expect(report.stats.resends, describeViolations(report)).toBe(0)
  expect(report.stats.existsAnswers).toBe(0)
}

const run = (jobId: string, app: { id: string; baseUrl: string; apiKey: string }, rpm = 6000, settings = {}) =>
  loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: rpm,
    settings: { quotaWindowMs: 10_000, ...settings },
  })

describe('loader against sandbox faults', () => {
  it('paces to the quota: no 429 in steady state and the window never overfull', async () => {
    // 20 requests per 2 s window = 600/min.
    const { app, planned } = await scenario('pace', { requestsPerMinute: 20, windowMs: 2000 }, 1500)
    const out = await run('pace', app, 600, { quotaWindowMs: 2000 })
    expect(out.status).toBe('done')
    const log = await fx.sb.requests(app.id)
    expect(log.filter((r) => r.status === 429)).toHaveLength(0)
    expect(
      maxInWindow(
        log.map((r) => r.receivedAtMs),
        2000,
      ),
    ).toBeLessThanOrEqual(20)
    expectNoResend(await expectExact(app.id, 'pace', planned))
  })

  it('rides out a 429 storm', async () => {
    const { app, planned } = await scenario('storm', { faults: { extra429: 0.5, seed: 7 } })
    const out = await run('storm', app)
    expect(out.status).toBe('done')
    expect(out.counters.rateLimited).toBeGreaterThan(3)
    const report = await expectExact(app.id, 'storm', planned)
    // A 429 processes nothing: items go again, but none is ever answered "already exists".
    expect(report.stats.resends).toBeGreaterThan(0)
    expect(report.stats.existsAnswers).toBe(0)
  })

  it('honours header-less 429s from their text: each batch waits the named seconds, nothing rejected', async () => {
    // As published: no Retry-After, no X-RateLimit-*; the wait is only in "…Please retry for
    // seconds after 1." The loader's own pacing here is 10 ms a slot, so a pause of its default
    // (two slots) would bring a batch back within milliseconds.
    const { app, planned } = await scenario('storm-text', { rateLimitHeaders: false, faults: { extra429: 0.5, seed: 5 } })
    const out = await run('storm-text', app)
    expect(out.status).toBe('done')
    await fx.sb.whenIdle()
    const log = await fx.sb.requests(app.id)
    const limited = log.filter((r) => r.status === 429)
    expect(limited.length).toBeGreaterThan(3)
    for (const r of limited) {
      expect(r.code).toBe('ERR_TOO_MANY_REQUESTS')
      const key = r.items?.[0]?.key as string
      const next = log.find((l) => l.receivedAtMs > r.receivedAtMs && l.items?.some((i) => i.key === key))
      expect(next, `the batch of ${key} was sent again`).toBeDefined()
      // The text said one second: the same batch went again no earlier than that.
      expect((next?.receivedAtMs ?? 0) - r.receivedAtMs, `the batch of ${key} after its 429`).toBeGreaterThanOrEqual(1000)
    }
    const stats = await fx.store.entityStats('storm-text')
    expect(stats.reduce((a, s) => a + s.rejected, 0)).toBe(0)
    await expectExact(app.id, 'storm-text', planned)
  })

  it('survives partial-commit 500s (already-exists on resend = done)', async () => {
    const { app, planned } = await scenario('partial', { faults: { partialCommit500: 0.3, seed: 11 } })
    const out = await run('partial', app)
    expect(out.status).toBe('done')
    const stats = await fx.store.entityStats('partial')
    expect(stats.reduce((a, s) => a + s.alreadyPresent, 0)).toBeGreaterThan(0)
    const report = await expectExact(app.id, 'partial', planned)
    expect(report.stats.existsAnswers).toBeGreaterThan(0)
  })

  it('a message request answered 500 after a partial commit of good rows: the rows not written go again, none is rejected', async () => {
    // The platform documents this answer for a request holding a bad row (the others written);
    // the sandbox's partialCommit500 fault gives it to a good batch, which the loader cannot tell
    // apart: it reads the batch back, settles the rows written, and sends the others again (each
    // alone, or planned again behind the first one alone: src/load/isolate-rows.ts). Nothing is
    // rejected: only a 500 to a request holding one row alone would, and the fault needs two.
    const app = await fx.sb.createApp({ id: 'partialmsg', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    await fx.store.ensureJob('partialmsg', app.id)
    await fx.store.planItems('partialmsg', 'users', users(10))
    expect((await run('partialmsg', app)).status).toBe('done')
    await fx.store.planItems('partialmsg', 'messages', messages(150, 10))
    await fx.sb.settings(app.id, { faults: { partialCommit500: 0.5, seed: 4 } })
    const first = await run('partialmsg', app)
    expect(first.status).toBe('done')
    await fx.sb.whenIdle()
    const log = (await fx.sb.requests(app.id)).filter((r) => r.endpoint === 'messages')
    expect(log.filter((r) => r.fault === 'partialCommit500' && r.itemCount === 50).length).toBeGreaterThan(0)
    expect(await fx.store.listRejects('partialmsg')).toEqual([])
    expect(first.counters.readBacks).toBeGreaterThan(0)
    const report = await expectExact(app.id, 'partialmsg', { users: 10, groups: 0, members: 0, messages: 150 })
    // Only rows not written went again: no "already exists", each row created once.
    expect(report.stats.existsAnswers).toBe(0)
  })

  it('survives dropped connections before and after commit', async () => {
    const { app, planned } = await scenario('drops', { faults: { dropBeforeCommit: 0.15, dropAfterCommit: 0.15, seed: 5 } })
    const out = await run('drops', app)
    expect(out.status).toBe('done')
    await expectExact(app.id, 'drops', planned)
  })

  it('copes with latency (20–400 ms per request)', async () => {
    const { app, planned } = await scenario('latency', { faults: { latencyMs: { min: 20, max: 400 }, seed: 3 } }, 300)
    const out = await run('latency', app)
    expect(out.status).toBe('done')
    expectNoResend(await expectExact(app.id, 'latency', planned))
  })

  it('isolates a poison item in a batch of 50: only it is rejected, the rest loads', async () => {
    const app = await fx.sb.createApp({ id: 'poison', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    await fx.store.ensureJob('poison', app.id)
    await fx.store.planItems('poison', 'users', users(2))
    const msgs = messages(100, 2)
    // An item the platform fails on with a 500 and no per-item results, every time (as it does on
    // a NUL character, which the sandbox now refuses per item): the sandbox's store refuses m17.
    await sql`create or replace function sandbox.poison_m17() returns trigger language plpgsql as $$
      begin
        if new.app_id = 'poison' and new.muid = 'm17' then raise exception 'poison item'; end if;
        return new;
      end $$`.execute(fx.sb.store)
    await sql`create trigger poison_m17 before insert on sandbox.messages for each row execute function sandbox.poison_m17()`.execute(fx.sb.store)
    // And one the platform refuses item by item.
    const invalid = msgs[70] as { payload: Record<string, unknown> }
    invalid.payload.receiver = 'nobody-at-all'
    await fx.store.planItems('poison', 'messages', msgs)
    const out = await run('poison', app, 6000, { maxAttempts: 2 })
    expect(out.status).toBe('rejected')
    const rejects = await fx.store.listRejects('poison')
    const keys = rejects.map((r) => r.targetKey).sort()
    expect(keys).toContain('m17')
    const m = await sandboxKeys(fx.sb, app.id, 'messages')
    expect(m.has('m17')).toBe(false)
    expect(m.size).toBe(100 - rejects.length)
    expect(rejects.length).toBeLessThanOrEqual(2)
    expect(out.counters.batchesSplit).toBeGreaterThan(0)
    // A 500 ERR_EXCEPTION where nothing landed: the read-back finds none of the rows, so the
    // request is retried (maxAttempts) and then split, as any failed request is.
    await fx.sb.whenIdle()
    const ofPoison = (await fx.sb.requests(app.id)).filter((r) => r.items?.some((i) => i.key === 'm17'))
    expect(ofPoison.slice(0, 2).map((r) => [r.itemCount, r.status, r.code, r.committed])).toEqual([
      [50, 500, 'ERR_EXCEPTION', 0],
      [50, 500, 'ERR_EXCEPTION', 0],
    ])
    expect(ofPoison.map((r) => r.itemCount).at(-1)).toBe(1)
    expect(out.counters.readBacks).toBeGreaterThanOrEqual(2)
    // The splits re-sent only what had failed as a whole; the rejected items were never created.
    await audit(app.id, 'poison')
  })

  it('rides out a failing ledger: refused claims, a lost claim answer, a failed drained check and dead-lease takeover; past giveUpAfterMs it stops naming the operation; a permanent error stops it at once', async () => {
    const { app, planned } = await scenario('ledgerfaults', {}, 200)
    // The ledger refuses three claims (57P01: a restart of a few seconds), then the first claim that
    // takes batches commits but its answer is lost (a reset after the commit): those batches are
    // held by no one until their lease ends, then claimed again, and none is sent twice.
    const refused = await refuseLedgerWrites(fx.store, 'batches', 'ledgerfaults', 'new.lease_token is distinct from old.lease_token', 3, '57P01')
    const ledger = fx.store.batches
    let lost: number[] | undefined
    const batches = {
      ...ledger,
      claim: async (args: Parameters<typeof ledger.claim>[0]) => {
        const claimed = await ledger.claim(args)
        if (lost === undefined && claimed.length > 0) {
          lost = claimed.map((b) => b.id)
          return connectionReset()
        }
        return claimed
      },
      leased: failOnce(ledger.leased, connectionReset),
      drained: failOnce(ledger.drained, connectionReset),
    }
    try {
      const out = await loadOnce({
        store: { ...fx.store, batches },
        stateUrl: fx.tdb.url,
        jobId: 'ledgerfaults',
        appId: app.id,
        baseUrl: app.baseUrl,
        apiKey: app.apiKey,
        requestsPerMinute: 6000,
        settings: { quotaWindowMs: 10_000, leaseSeconds: 6 },
      })
      expect(out.status, out.error?.message).toBe('done')
      expect(lost?.length).toBeGreaterThan(0)
      // 3 refused claims, the lost one, the takeover's look and the drained check.
      expect(out.counters.ledgerErrors).toBe(6)
    } finally {
      await refused()
    }
    expectNoResend(await expectExact(app.id, 'ledgerfaults', planned))

    const down = await scenario('ledgerdown', {}, 20)
    const refusing = await refuseLedgerWrites(
      fx.store,
      'batches',
      'ledgerdown',
      'new.lease_token is distinct from old.lease_token',
      1_000_000,
      '40001',
    )
    try {
      const out = await run('ledgerdown', down.app, 6000, { giveUpAfterMs: 2000 })
      expect(out.status).toBe('failed')
      expect(out.error?.message).toMatch(
        /^the ledger kept failing while claiming batches: \d+ attempts in [\d.]+ s, the last: the ledger refused the write \(test\); gave up after load\.giveUpAfterMs = 2000 ms/,
      )
      expect(out.counters.ledgerErrors).toBeGreaterThanOrEqual(3)
      expect(await fx.sb.requests(down.app.id)).toEqual([])
    } finally {
      await refusing()
    }

    // A permanent error (P0001: a trigger's RAISE; a missing table, a denied permission or a bug
    // alike) stops the loader at once, long before giveUpAfterMs, counted once and naming the operation.
    const broken = await refuseLedgerWrites(fx.store, 'batches', 'ledgerdown', 'new.lease_token is distinct from old.lease_token', 1_000_000, 'P0001')
    try {
      const startedAt = Date.now()
      const out = await run('ledgerdown', down.app, 6000, { giveUpAfterMs: 10_000 })
      expect(out.status).toBe('failed')
      expect(out.error?.message).toMatch(
        /^the ledger failed while claiming batches, with an error no retry can fix \(P0001\): the ledger refused the write \(test\)\. Nothing was lost/,
      )
      expect(Date.now() - startedAt).toBeLessThan(3000)
      expect(out.counters.ledgerErrors).toBe(1)
      expect(await fx.sb.requests(down.app.id)).toEqual([])
    } finally {
      await broken()
    }
  })
})
