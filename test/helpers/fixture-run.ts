/**
 * The set-up the connectors' end-to-end tests share: a fresh Postgres ledger, an app of the file's
 * sandbox that keeps history as old as the fixtures (January 2024) and takes 6,000 requests a
 * minute, and a `chatferry.yaml` for `run` against both with the test's source and policies. Both
 * are dropped with the file's sandbox.
 */
import type { PoliciesInput } from '../../mappings/index.ts'
import { createTestDatabase } from './db.ts'
import { dropWithin } from './loader-harness.ts'
import { writeRunConfig } from './run-e2e.ts'
import type { FileSandbox, TestApp } from './sandbox.ts'

export async function fixtureRun(
  box: FileSandbox,
  o: { readonly statePrefix: string; readonly source: Record<string, unknown>; readonly policies: PoliciesInput },
): Promise<{ app: TestApp; cfg: string }> {
  const state = await createTestDatabase(o.statePrefix)
  box.cleanups.push(() => dropWithin(state))
  const app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: o.source,
    policies: o.policies,
    load: { quotaWindowMs: 10_000 },
  })
  return { app, cfg }
}
