/**
 * `chatferry run` end to end with the generic-sql connector on SQLite (an in-house schema, the
 * embedded ledger): the sandbox's contents item by item against what the fixture's rows and the
 * policies predict, and every bad row rejected with its legacy id and reason.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { expectedGeneric } from '../../../fixtures/generic-sql/expected.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../../../fixtures/generic-sql/fixture.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { compareWithExpected, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../../helpers/sandbox.ts'

// The fixture is from March 2024: the app has extended retention and the run sends old messages.
const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' }, deletes: { mode: 'tombstone' } }

let tsb: TestSandbox

beforeAll(async () => {
  tsb = await startTestSandbox()
})

afterAll(async () => {
  await tsb?.close()
})

it('generic-sql on SQLite → embedded ledger → sandbox: item by item, bad rows rejected', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-run-sqlite-'))
  const url = `sqlite:${join(dir, 'legacy.db')}`
  const seed = await loadGenericSqlFixture('sqlite', url)
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    dir,
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    source: genericSourceConfig(url, 2) as unknown as Record<string, unknown>,
    policies: POLICIES,
    load: { quotaWindowMs: 10_000 },
  })
  const started = Date.now()
  const res = await runCli(['run', '--config', cfg]).done
  expect(res.code, res.stderr.slice(-3000)).toBe(3)

  const expected = expectMigration(expectedGeneric(seed), POLICIES, started)
  expect(expected.items.messages.size).toBeGreaterThan(5)
  const actual = await sandboxContents(tsb.sandbox, app.id)
  expect(compareWithExpected(expected.items, actual)).toEqual([])

  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as {
    entity: string
    legacyId: string
    message: string | null
  }[]
  expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual([...expected.rejects.keys()].sort())
  for (const r of rejects) {
    expect(r.message ?? '', `${r.entity} ${r.legacyId}`).toContain(expected.rejects.get(`${r.entity} ${r.legacyId}`)?.field)
  }
  // The SQLite-only bad row: invalid UTF-8 in the text.
  expect(rejects.map((r) => r.legacyId)).toContain('11')
})
