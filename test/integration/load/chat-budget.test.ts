/**
 * The chat quota budget (`createChatBudget`): two processes' budgets (two ledger connections)
 * drawing on the one row `<appId>#chat` together never send more chat calls in any window than
 * the quota — proven from the sandbox's request log, not from the budget's own count — and a chat
 * 429 pauses every process for the wait it names. The import budget row is not touched.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { chatBudgetKey, createChatBudget } from '../../../src/load/chat-budget.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { chatWorld, chatWrites } from '../../helpers/chat-world.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { dropWithin, maxInWindow } from '../../helpers/loader-harness.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let t: TestSandbox
let tdb: TestDatabase
let processA: LedgerStore
let processB: LedgerStore

beforeAll(async () => {
  t = await startTestSandbox()
  tdb = await createTestDatabase('cf_chat_budget')
  processA = await openLedger({ url: tdb.url })
  processB = await openLedger({ url: tdb.url })
})
afterAll(async () => {
  await processA?.close()
  await processB?.close()
  await t?.close()
  await dropWithin(tdb)
})

async function slotsTaken(store: LedgerStore, key: string): Promise<number | undefined> {
  const r = await sql<{ slots_taken: string }>`select slots_taken from chatferry.quota_budgets where app_id = ${key}`.execute(inspectLedger(store))
  return r.rows[0] === undefined ? undefined : Number(r.rows[0].slots_taken)
}

describe('createChatBudget', () => {
  it('two processes sharing <appId>#chat never exceed the chat quota in any window', async () => {
    const windowMs = 2000
    const perWindow = 12
    // The sandbox refuses the 13th call in any 2 s: a budget that overshoots would see 429s.
    const { app } = await chatWorld(t, { chatRequestsPerMinute: perWindow, windowMs })
    const options = { appId: app.id, requestsPerMinute: (perWindow * 60_000) / windowMs, windowMs }
    const budgets = [await createChatBudget(processA.quota, options), await createChatBudget(processB.quota, options)]
    const calls = 24
    await Promise.all(
      budgets.map((budget, p) =>
        Promise.all(Array.from({ length: calls }, (_, i) => budget.run(() => app.client.updateUser('bob', { name: `p${p} call ${i}` })))),
      ),
    )
    const log = await t.sandbox.requests(app.id)
    const writes = log.filter((e) => e.endpoint === 'users.update')
    expect(writes).toHaveLength(2 * calls)
    expect(writes.every((e) => e.status === 200)).toBe(true)
    expect(
      maxInWindow(
        writes.map((e) => e.receivedAtMs),
        windowMs,
      ),
    ).toBeLessThanOrEqual(perWindow)
    expect(budgets.map((b) => b.counters)).toEqual([
      { requests: calls, rateLimited: 0 },
      { requests: calls, rateLimited: 0 },
    ])
    expect(await slotsTaken(processA, chatBudgetKey(app.id))).toBe(2 * calls)
    expect(await slotsTaken(processA, app.id)).toBeUndefined()
  })

  it('a chat 429 pauses every process for its Retry-After; the call is made again', async () => {
    const windowMs = 3000
    const { app } = await chatWorld(t, { chatRequestsPerMinute: 2, windowMs })
    // The budget believes in far more than the sandbox allows: the third call meets a 429.
    const options = { appId: app.id, requestsPerMinute: 6000 }
    const a = await createChatBudget(processA.quota, options)
    const b = await createChatBudget(processB.quota, options)
    await a.run(() => app.client.updateUser('bob', { name: 'one' }))
    await a.run(() => app.client.updateUser('bob', { name: 'two' }))
    const started = Date.now()
    const third = a.run(() => app.client.updateUser('bob', { name: 'three' }))
    // Let the 429 arrive and pause the row, then the other process asks for a slot.
    await new Promise((r) => setTimeout(r, 300))
    const bStarted = Date.now()
    await b.take()
    const bWaited = Date.now() - bStarted
    await third
    expect(a.counters).toEqual({ requests: 4, rateLimited: 1 })
    expect(bWaited).toBeGreaterThanOrEqual(1500)
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000)
    expect((await chatWrites(t, app)).map((e) => e.status)).toEqual([200, 200, 429, 200])
  })

  it('gives up after maxRateLimitedRetries 429s in a row with the last one', async () => {
    const { app } = await chatWorld(t, { chatRequestsPerMinute: 1, windowMs: 60_000 })
    const budget = await createChatBudget(processA.quota, { appId: app.id, requestsPerMinute: 6000, maxRateLimitedRetries: 1, maxRetryAfterMs: 100 })
    await budget.run(() => app.client.updateUser('bob', { name: 'one' }))
    const err = await budget.run(() => app.client.updateUser('bob', { name: 'two' })).catch((e: unknown) => e)
    expect(err).toMatchObject({ status: 429, code: 'ERR_TOO_MANY_REQUESTS' })
    expect(budget.counters).toEqual({ requests: 3, rateLimited: 1 })
  })
})
