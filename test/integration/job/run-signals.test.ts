/**
 * Stopping `chatferry run` with signals, as an operator does, and what two planners of one job
 * count. A few-thousand-post Mattermost source read in pages of 10 keeps planning busy for
 * seconds; the ledger is on the real Postgres, the target is the sandbox over HTTP.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import { PoliciesSchema } from '../../../mappings/index.ts'
import { LEGACY_ENTITIES } from '../../../src/model/index.ts'
import { planJob } from '../../../src/plan/plan-job.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { loadMattermostFixture } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { largeMattermostSeed } from '../../helpers/mattermost-large.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let tsb: TestSandbox
let source: TestDatabase
const states: TestDatabase[] = []

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_sig_src')
  await loadMattermostFixture('postgres', source.url, { seed: largeMattermostSeed('postgres', { posts: 3000 }) })
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  for (const s of states) {
    await dropWithin(s)
  }
})

async function freshState(): Promise<TestDatabase> {
  const db = await createTestDatabase('cf_sig_state')
  states.push(db)
  return db
}

async function runConfig(stateUrl: string): Promise<string> {
  // 100 requests a second on both sides: loading the rerun takes a second or two.
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 100, windowMs: 1000 })
  return writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl,
    source: { connector: 'mattermost', url: source.url, pageSize: 10 },
    policies: { retention: { oldMessages: 'send' } },
    requestsPerMinute: 6000,
    load: { leaseSeconds: 15, quotaWindowMs: 1000 },
  })
}

async function runRows(stateUrl: string): Promise<{ mode: string; status: string }[]> {
  const store = await openLedger({ url: stateUrl })
  try {
    const r = await sql<{ mode: string; status: string }>`select mode, status from chatferry.runs order by id`.execute(inspectLedger(store))
    return r.rows
  } finally {
    await store.close()
  }
}

describe('signals', () => {
  it('SIGTERM while planning: a log line, exit 1, the run row interrupted; a rerun resumes and finishes', async () => {
    const state = await freshState()
    const cfg = await runConfig(state.url)
    const first = runCli(['run', '--config', cfg])
    await first.waitFor('planned members', 60_000)
    first.child.kill('SIGTERM')
    const stopped = await first.done
    expect(stopped.signal, 'handled, not killed by the signal').toBeNull()
    expect(stopped.code, stopped.stderr.slice(-2000)).toBe(1)
    expect(stopped.stderr).toMatch(/SIGTERM: stopping; finishing the page being planned/)
    expect(stopped.stderr).toMatch(/stopped by SIGTERM; run the same command again to resume/)
    expect(stopped.stderr).not.toMatch(/planned messages/)
    expect(await runRows(state.url)).toEqual([{ mode: 'run', status: 'interrupted' }])

    const again = await runCli(['run', '--config', cfg]).done
    // The fixture's planted bad rows end every complete run with exit 3 (rejected).
    expect(again.code, again.stderr.slice(-2000)).toBe(3)
    expect(again.stdout).toMatch(/users\s+read completed by an earlier run/)
    expect(again.stdout).toMatch(/messages\s+\d+ rows/)
    // One run, one row (src/job/job-run.ts): its loader writes none of its own.
    expect(await runRows(state.url)).toEqual([
      { mode: 'run', status: 'interrupted' },
      { mode: 'run', status: 'rejected' },
    ])
  }, 120_000)

  it('SIGINT twice: the second quits at once with exit 1 and says so', async () => {
    const state = await freshState()
    const cfg = await runConfig(state.url)
    const run = runCli(['run', '--config', cfg])
    await run.waitFor('planned users', 60_000)
    run.child.kill('SIGINT')
    await run.waitFor('SIGINT: stopping')
    run.child.kill('SIGINT')
    const res = await run.done
    expect(res.signal).toBeNull()
    expect(res.code).toBe(1)
    expect(res.stderr).toMatch(/SIGINT again: quitting at once/)
  })
})

describe('two planners of one job at once', () => {
  it("each counts as new only what it inserted: the two summaries' new items add up to the ledger's", async () => {
    const state = await freshState()
    const policies = PoliciesSchema.parse({ retention: { oldMessages: 'send' } })
    const config = SourceConfigSchema.parse({ connector: 'mattermost', url: source.url, pageSize: 25 })
    const now = Date.now()
    const setup = await openLedger({ url: state.url })
    await setup.ensureJob('twice', 'twice')
    await setup.close()
    const planOnce = async () => {
      const store = await openLedger({ url: state.url })
      const session = await createConnector(config).open()
      try {
        return await planJob({ jobId: 'twice', store, session, policies, now, pageSize: 25 })
      } finally {
        await session.close()
        await store.close()
      }
    }
    const results = await Promise.allSettled([planOnce(), planOnce()])
    const summaries = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
    // A planner may give up on an id-map race (it says so); the counts of those that finished must not overlap.
    for (const r of results) {
      if (r.status === 'rejected') {
        expect(String(r.reason)).toMatch(/id map of job twice changed under this run/)
      }
    }
    expect(summaries.length).toBeGreaterThan(0)
    const store = await openLedger({ url: state.url })
    try {
      const inLedger = await sql<{ entity: string; n: number }>`
        select entity, count(*)::int as n from chatferry.items where job_id = 'twice' and status = 'planned' group by entity`.execute(
        inspectLedger(store),
      )
      const ledger = Object.fromEntries(inLedger.rows.map((r) => [r.entity, r.n]))
      for (const entity of LEGACY_ENTITIES) {
        const claimed = summaries.reduce((a, s) => a + s.entities[entity].ledger.inserted, 0)
        if (summaries.length === 2) {
          expect(claimed, entity).toBe(ledger[entity] ?? 0)
        } else {
          expect(claimed, entity).toBeLessThanOrEqual(ledger[entity] ?? 0)
        }
      }
      expect(ledger.messages).toBeGreaterThan(2000)
    } finally {
      await store.close()
    }
  })
})
