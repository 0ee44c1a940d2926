/**
 * The loader against the sandbox's published default for bad message rows (issue 12): a request
 * holding a row the platform refuses writes its good rows and answers 500 `ERR_EXCEPTION` with no
 * per-item results. The loader reads such a batch back through the chat interface
 * (src/load/read-back.ts): the rows it finds are done; each row not found goes alone
 * (src/load/isolate-rows.ts), and is rejected only on the platform's 500 to that request of its
 * own, with that answer (issue 24). The request log shows what the sandbox received: every good
 * row created exactly once and carried once, each bad row twice (its batch, then alone); the
 * sandbox's stored keys are not the proof (its unique keys would hide a second write). A stop in the middle of a
 * read-back ends the same way after a rerun (a SIGKILL: loader-crash.test.ts; the other bad-row
 * behaviours and SIGKILLs during the isolation: loader-bad-row-semantics.test.ts); and rows
 * chatferry's own validation knows to be bad never cost a request.
 */
import { describe, expect, it } from 'vitest'

import { createMappingContext } from '../../../mappings/context.ts'
import { mapMessage } from '../../../mappings/map-message.ts'
import type { LegacyMessage } from '../../../src/model/index.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { PlannedItem, RejectedItem } from '../../../src/state/store.ts'
import { createPlatformClient } from '../../../src/target/client.ts'
import { checkBadRowLog } from '../../helpers/bad-row-log.ts'
import { auditDeliveries, describeViolations } from '../../helpers/delivery-audit.ts'
import { groups, messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, sandboxKeys, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_badrows')

const run = (jobId: string, app: { id: string; baseUrl: string; apiKey: string }) =>
  loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: 6000,
    settings: { quotaWindowMs: 10_000, maxAttempts: 2 },
  })

describe('loader against the bad-row 500 default', () => {
  it('rows only the platform can refuse: every good row loads exactly once, each bad row is rejected', async () => {
    const app = await fx.sb.createApp({ id: 'badrows', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    expect((await fx.sb.settings(app.id)).badRow500).toEqual(['messages'])
    await fx.store.ensureJob('badrows', app.id)
    await fx.store.planItems('badrows', 'users', users(6))
    await fx.store.planItems('badrows', 'groups', groups(1))
    const now = Math.floor(Date.now() / 1000)
    const msgs = messages(240, 6)
    // Each is a valid import item (our validation passes it); only the platform's state or clock
    // refuses it: a sender or receiver it does not hold, a sentAt ahead of its clock.
    const bad: Record<string, (p: Record<string, unknown>) => void> = {
      m7: (p) => (p.sender = 'ghost'),
      m51: (p) => (p.receiver = 'nobody'),
      m52: (p) => ((p.receiverType = 'group'), (p.receiver = 'no-such-group')),
      m199: (p) => (p.sentAt = now + 3600),
    }
    for (const [i, m] of msgs.entries()) {
      const p = m.payload as { data: Record<string, unknown> }
      // As chatferry writes them (policies.legacyMetadata): the read-back matches these by legacy
      // id, the others (as written without legacy ids) by sender, receiver, sentAt and text.
      if (i % 2 === 0) {
        p.data.metadata = { legacy: { id: m.legacyId } }
      }
      bad[m.targetKey]?.(m.payload as Record<string, unknown>)
    }
    // A sentAt past the retention window by the time of the load: the loader knows that one when it
    // packs (retention-at-pack.ts), and skips it by policy instead of sending it.
    const m130 = msgs.find((m) => m.targetKey === 'm130')?.payload as Record<string, unknown>
    m130.sentAt = now - 184 * 86_400
    await fx.store.planItems('badrows', 'messages', msgs)

    const out = await run('badrows', app)
    expect(out.status).toBe('rejected')
    const rejects = await fx.store.listRejects('badrows')
    expect(rejects.map((r) => r.targetKey).sort()).toEqual(Object.keys(bad).sort())
    for (const r of rejects) {
      // The platform's own answer to a request that held only this row.
      expect(r.code, r.targetKey).toBe('ERR_EXCEPTION')
      expect(r.message, r.targetKey).toMatch(/sent alone.*refused this row alone: .*\(HTTP 500\): ERR_EXCEPTION: .*chatferry rejects.*retry-rejected/)
    }
    await fx.sb.whenIdle()
    // Proven from what the platform received (the request log), not from the sandbox's unique keys,
    // which would hide a second write: every good row created exactly once and never carried after
    // that, nothing else created, each bad row's last request that row alone, answered 500.
    const good = new Set(msgs.map((m) => m.targetKey).filter((k) => !(k in bad) && k !== 'm130'))
    const facts = checkBadRowLog(await fx.sb.requests(app.id), good, new Set(Object.keys(bad)))
    expect(facts.sentAfterCreated).toBe(0)
    const log = (await fx.sb.requests(app.id)).filter((r) => r.endpoint === 'messages')
    expect(log.filter((r) => r.items?.some((i) => i.key === 'm130'))).toEqual([])
    // One import request per batch and one per bad row alone: 239 rows to send, 5 + 4 requests;
    // every good row carried exactly once, each bad row twice (its batch, then alone).
    expect(log).toHaveLength(Math.ceil(239 / 50) + Object.keys(bad).length)
    const carried = new Map<string, number>()
    for (const r of log) {
      for (const i of r.items ?? []) {
        carried.set(i.key, (carried.get(i.key) ?? 0) + 1)
      }
    }
    expect(carried.size).toBe(239)
    expect([...carried].filter(([k, n]) => n !== (k in bad ? 2 : 1))).toEqual([])
    // The three batches holding a bad row answered 500 after committing their good rows, were read
    // back (chat requests, not import requests); each bad row went alone and was refused so. Messages
    // drain by their sentAt: m199, an hour ahead, goes last, in the 39-row batch.
    const failed = log.filter((r) => r.status === 500 && r.code === 'ERR_EXCEPTION')
    expect(failed.map((r) => r.committed).sort()).toEqual([0, 0, 0, 0, 38, 48, 49])
    expect(
      failed
        .filter((r) => r.itemCount === 1)
        .map((r) => r.items?.[0]?.key)
        .sort(),
    ).toEqual(Object.keys(bad).sort())
    expect(out.counters).toMatchObject({ readBacks: 3, batchesSplit: 3 })
    expect(out.counters.chatRequests).toBeGreaterThanOrEqual(3)
    const report = await auditDeliveries({
      sb: fx.sb,
      appId: app.id,
      ledger: inspectLedger(fx.store),
      jobId: 'badrows',
      kills: 0,
      concurrency: 4,
      timeoutMs: 3000,
    })
    expect(report.violations, describeViolations(report)).toEqual([])
    // The re-sends: each bad row alone, after its batch gave no per-item answer.
    expect(report.stats.resends).toBe(Object.keys(bad).length)
    const stats = await fx.store.entityStats('badrows')
    const m = stats.find((s) => s.entity === 'messages')
    expect(m).toMatchObject({ done: 240 - Object.keys(bad).length - 1, created: 240 - Object.keys(bad).length - 1, skipped: 1, remaining: 0 })
  })

  it('a stop in the middle of a read-back hands the batch back; the next load ends the same way, nothing created twice', async () => {
    // A 10 s window: the chat 429 pauses the app's chat budget for a few seconds, which the second load waits out.
    const app = await fx.sb.createApp({ id: 'stopreadback', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    await fx.store.ensureJob('stopreadback', app.id)
    await fx.store.planItems('stopreadback', 'users', users(6))
    const msgs = messages(50, 6)
    ;(msgs[20]?.payload as Record<string, unknown>).receiver = 'nobody'
    await fx.store.planItems('stopreadback', 'messages', msgs)
    // One chat request a window, spent here: the loader's read-back meets a 429 and waits.
    await fx.sb.settings(app.id, { chatRequestsPerMinute: 1 })
    await createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey }).listMessages({ limit: 1 })
    const stop = new AbortController()
    const loading = loadOnce({
      store: fx.store,
      stateUrl: fx.tdb.url,
      jobId: 'stopreadback',
      appId: app.id,
      baseUrl: app.baseUrl,
      apiKey: app.apiKey,
      requestsPerMinute: 6000,
      settings: { quotaWindowMs: 10_000, maxAttempts: 2 },
      signal: stop.signal,
    })
    const until = Date.now() + 20_000
    while (Date.now() < until && !(await fx.sb.requests(app.id)).some((r) => r.endpoint === 'messages' && r.status === 500)) {
      await new Promise((r) => setTimeout(r, 50))
    }
    await new Promise((r) => setTimeout(r, 300))
    stop.abort()
    const stopped = await loading
    expect(stopped.status).toBe('stopped')
    expect(stopped.counters).toMatchObject({ readBacks: 1, batchesReleased: 1 })
    const m1 = (await fx.store.entityStats('stopreadback')).find((s) => s.entity === 'messages')
    expect(m1).toMatchObject({ done: 0, sent: 50 })

    await fx.sb.settings(app.id, { chatRequestsPerMinute: 10_000 })
    const out = await run('stopreadback', app)
    expect(out.status).toBe('rejected')
    expect(out.counters).toMatchObject({ readBacks: 1, batchesSplit: 1 })
    expect((await fx.store.listRejects('stopreadback')).map((r) => [r.targetKey, r.code])).toEqual([['m20', 'ERR_EXCEPTION']])
    await fx.sb.whenIdle()
    const log = (await fx.sb.requests(app.id)).filter((r) => r.endpoint === 'messages')
    // Sent again after the stop: the 49 rows answered "already exists" (no second copy), the bad row
    // failed it again; then the bad row alone.
    expect(log.map((r) => [r.itemCount, r.status, r.committed])).toEqual([
      [50, 500, 49],
      [50, 500, 0],
      [1, 500, 0],
    ])
    expect(log[1]?.items?.filter((i) => i.result === 'exists')).toHaveLength(49)
    // Nothing created twice, read from the log: the 49 created once each (by the first request), m20 never.
    const good = new Set(msgs.map((m) => m.targetKey).filter((k) => k !== 'm20'))
    expect(checkBadRowLog(log, good, new Set(['m20']))).toMatchObject({ existsAnswers: 49, sentAfterCreated: 49 })
    const m = (await fx.store.entityStats('stopreadback')).find((s) => s.entity === 'messages')
    expect(m).toMatchObject({ done: 49, created: 49, rejected: 1, remaining: 0 })
    const report = await auditDeliveries({
      sb: fx.sb,
      appId: app.id,
      ledger: inspectLedger(fx.store),
      jobId: 'stopreadback',
      kills: 0,
      concurrency: 4,
      timeoutMs: 3000,
    })
    expect(report.violations, describeViolations(report)).toEqual([])
  })

  it('rows our validation knows to be bad are rejected at mapping with their field path and never sent', async () => {
    const app = await fx.sb.createApp({ id: 'knownbad', settings: { requestsPerMinute: 1000, windowMs: 10_000 } })
    await fx.store.ensureJob('knownbad', app.id)
    await fx.store.planItems('knownbad', 'users', users(3))
    const nowMs = Date.now()
    const sentAt = nowMs - 86_400_000
    // A user module that turns some messages into items the platform refuses.
    const breakers: Record<string, (item: Record<string, unknown>) => void> = {
      'k-bigdata': (i) => (i.data = { text: 'x'.repeat(10_300) }),
      'k-payload': (i) =>
        (i.mentionedUserDetails = Object.fromEntries(Array.from({ length: 700 }, (_, n) => [`p${n}`, { uid: `p${n}`, name: 'n'.repeat(100) }]))),
      'k-size': (i) => (
        (i.type = 'file'),
        (i.data = { attachments: [{ url: 'https://files.example/a.pdf', name: 'a.pdf', mimeType: 'application/pdf', extension: 'pdf', size: 350 }] })
      ),
      'k-blank': (i) => (i.data = { text: ' \n ' }),
      'k-nul': (i) => (i.data = { text: 'ok', extra: 'a\u0000b' }),
    }
    const ctx = createMappingContext({
      now: nowMs,
      policies: { emptyMessages: 'reject' },
      users: Object.fromEntries(['0', '1', '2'].map((id) => [id, { uid: `u${id}`, name: `User ${id}` }])),
      adjust: (entity, item, record) => {
        const id = (record as LegacyMessage).id
        if (entity === 'messages' && breakers[id]) {
          breakers[id](item as Record<string, unknown>)
        }
        return item
      },
    })
    const records: LegacyMessage[] = [
      ...Array.from({ length: 120 }, (_, i): LegacyMessage => ({
        id: `ok${i}`,
        senderId: String(i % 3),
        receiverType: 'user',
        receiverId: String((i + 1) % 3),
        type: 'text',
        text: `hi ${i}`,
        sentAt: sentAt + i * 1000,
      })),
      ...Object.keys(breakers).map((id): LegacyMessage => ({
        id,
        senderId: '0',
        receiverType: 'user',
        receiverId: '1',
        type: 'text',
        text: 'fine at first',
        sentAt,
      })),
      { id: 'k-empty', senderId: '0', receiverType: 'user', receiverId: '1', type: 'text', text: '   ', sentAt },
    ]
    const planned: PlannedItem[] = []
    const rejected: RejectedItem[] = []
    for (const record of records) {
      const r = mapMessage(record, ctx)
      if (r.kind === 'items') {
        for (const it of r.items) {
          planned.push({ legacyId: record.id, targetKey: it.targetKey, payload: it.payload, sortKey: record.sentAt })
        }
      } else if (r.kind === 'rejected') {
        rejected.push({ legacyId: record.id, code: 'MAPPING_INVALID', message: `${r.field}: ${r.reason}` })
      }
    }
    const fieldOf = Object.fromEntries(rejected.map((r) => [r.legacyId, r.message.split(':')[0]]))
    expect(fieldOf).toEqual({
      'k-bigdata': 'data',
      'k-payload': '(item)',
      'k-size': 'data.attachments.0.size',
      'k-blank': 'data.text',
      'k-nul': 'data.extra',
      'k-empty': 'text',
    })
    expect(planned).toHaveLength(120)
    await fx.store.planItems('knownbad', 'messages', planned)
    await fx.store.rejectItems('knownbad', 'messages', rejected)

    const out = await run('knownbad', app)
    expect(out.status).toBe('rejected')
    const log = (await fx.sb.requests(app.id)).filter((r) => r.endpoint === 'messages')
    // Not one request carried a known-bad row: 120 good rows, 3 requests, no 500, nothing re-sent.
    const sentKeys = log.flatMap((r) => (r.items ?? []).map((i) => i.key))
    expect(sentKeys.filter((k) => k.startsWith('k-'))).toEqual([])
    expect(log).toHaveLength(Math.ceil(120 / 50))
    expect(log.every((r) => r.status === 200)).toBe(true)
    expect(sentKeys).toHaveLength(120)
    expect((await sandboxKeys(fx.sb, app.id, 'messages')).size).toBe(120)
  })
})
