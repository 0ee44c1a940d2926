/**
 * The world of the Mattermost delta tests: a sandbox, the Mattermost fixture in a Postgres source,
 * a Postgres ledger, an app at a quota no test waits on, and the run configuration (pages of 4
 * rows, history of any age sent). `close` ends the sandbox and drops both databases.
 */
import { loadMattermostFixture, type MattermostSeed } from '../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from './db.ts'
import { dropWithin } from './loader-harness.ts'
import { writeRunConfig } from './run-e2e.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from './sandbox.ts'

export interface MattermostDeltaWorld {
  readonly tsb: TestSandbox
  readonly source: TestDatabase
  readonly state: TestDatabase
  readonly app: TestApp
  readonly seed: MattermostSeed
  readonly cfg: string
  close(): Promise<void>
}

export async function startMattermostDeltaWorld(prefix: string): Promise<MattermostDeltaWorld> {
  const tsb = await startTestSandbox()
  const source = await createTestDatabase(`${prefix}_src`)
  const state = await createTestDatabase(`${prefix}_state`)
  const seed = await loadMattermostFixture('postgres', source.url)
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: { connector: 'mattermost', url: source.url, pageSize: 4 },
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
  })
  return {
    tsb,
    source,
    state,
    app,
    seed,
    cfg,
    async close() {
      await tsb.close()
      await dropWithin(source)
      await dropWithin(state)
    },
  }
}
