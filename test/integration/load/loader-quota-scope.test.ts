/**
 * `load.quotaScope`: which quota budget each import request draws its slot from. `app` (the
 * default): one row for the four endpoints together; `endpoint`: one row per endpoint, each with
 * the whole quota. Read from the ledger's budget rows against the sandbox's request log.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { resolveLoadConfig } from '../../../src/load/config.ts'
import { budgetKey } from '../../../src/load/quota-budget.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { ENTITIES } from '../../../src/target/schemas.ts'
import { groups, members, messages, users } from '../../helpers/ledger-fixtures.ts'
import { loadOnce, useLoaderFixture } from '../../helpers/loader-harness.ts'

const fx = useLoaderFixture('cf_quota_scope')

async function loadWithScope(name: string, quotaScope: 'app' | 'endpoint') {
  const app = await fx.sb.createApp({ id: name, settings: { requestsPerMinute: 6000, windowMs: 10_000 } })
  await fx.store.ensureJob(name, app.id)
  await fx.store.planItems(name, 'users', users(60))
  await fx.store.planItems(name, 'groups', groups(4))
  await fx.store.planItems(name, 'members', members(60, 4))
  await fx.store.planItems(name, 'messages', messages(120, 60))
  const out = await loadOnce({
    store: fx.store,
    stateUrl: fx.tdb.url,
    jobId: name,
    appId: app.id,
    baseUrl: app.baseUrl,
    apiKey: app.apiKey,
    requestsPerMinute: 6000,
    settings: { quotaWindowMs: 10_000, quotaScope },
  })
  expect(out.status).toBe('done')
  const log = await fx.sb.requests(app.id)
  // The import budgets only: the chat interface's budget (`<appId>#chat`, the update lane's) is apart by design.
  const budgets = await sql<{ app_id: string; slots_taken: string }>`
    select app_id, slots_taken from chatferry.quota_budgets
    where app_id like ${`${app.id}%`} and app_id <> ${`${app.id}#chat`}`.execute(inspectLedger(fx.store))
  return { app, log, budgets: new Map(budgets.rows.map((r) => [r.app_id, Number(r.slots_taken)])) }
}

describe('load.quotaScope', () => {
  it('defaults to app, and refuses anything but app or endpoint', () => {
    expect(resolveLoadConfig({}, {}, {}).quotaScope).toBe('app')
    expect(resolveLoadConfig({ quotaScope: 'endpoint' }, {}, {}).quotaScope).toBe('endpoint')
    expect(() => resolveLoadConfig({ quotaScope: 'job' }, {}, {})).toThrow(/quotaScope/)
  })

  it('app: every endpoint takes its slots from the one budget of the app', async () => {
    const { app, log, budgets } = await loadWithScope('scope-app', 'app')
    expect([...budgets.keys()]).toEqual([app.id])
    expect(budgets.get(app.id)).toBe(log.length)
  })

  it('endpoint: each endpoint takes its slots from a budget of its own', async () => {
    const { app, log, budgets } = await loadWithScope('scope-endpoint', 'endpoint')
    expect(budgets.has(app.id)).toBe(false)
    for (const entity of ENTITIES) {
      const sent = log.filter((r) => r.endpoint === entity).length
      expect(sent, `${entity} requests`).toBeGreaterThan(0)
      expect(budgets.get(budgetKey(app.id, 'endpoint', entity)), `${entity} budget`).toBe(sent)
    }
  })
})
