/**
 * A generic-sql job over a SQLite legacy file, as the CLI tests of one file each set it up: the
 * file's own ledger database and sandbox app (at a quota no test waits on), history of any age
 * sent, and the run configuration written (beside the legacy file when the source names its folder).
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { genericSourceConfig, loadGenericSqlFixture } from '../fixtures/generic-sql/fixture.ts'
import type { CliSuite } from './cli-suite.ts'
import { writeRunConfig } from './run-e2e.ts'
import type { TestApp } from './sandbox.ts'

export interface GenericJob {
  readonly app: TestApp
  readonly cfg: string
}

/** The generic-sql fixture written into a fresh folder: `{dir, url}` of its SQLite file. */
export async function fixtureSource(prefix: string): Promise<{ dir: string; url: string }> {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`))
  const url = `sqlite:${join(dir, 'legacy.db')}`
  await loadGenericSqlFixture('sqlite', url)
  return { dir, url }
}

export async function genericJob(suite: CliSuite, ledgerPrefix: string, source: { dir?: string; url: string }): Promise<GenericJob> {
  const state = await suite.freshDb(ledgerPrefix)
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
    ...(source.dir !== undefined ? { dir: source.dir } : {}),
  })
  return { app, cfg }
}
