/**
 * Issue 4, "Bad input", through `chatferry run` as a process: an unreachable source stops the run
 * (exit 1) with a message naming the host and never the password; a query that fails half-way
 * stops it too, and the next run resumes from the ledger's cursor and completes; a generic-sql
 * query that lacks a required column is a configuration error (exit 2) naming the column, before
 * any row is read.
 */
import { expect, it } from 'vitest'

import type { PoliciesInput } from '../../../mappings/index.ts'
import { expectedGeneric } from '../../fixtures/generic-sql/expected.ts'
import { genericSourceConfig, loadGenericSqlFixture } from '../../fixtures/generic-sql/fixture.ts'
import { ledgerRows, useCliSuite } from '../../helpers/cli-suite.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { compareWithExpected, expectMigration, sandboxContents, writeRunConfig } from '../../helpers/run-e2e.ts'

const POLICIES: PoliciesInput = { retention: { oldMessages: 'send' } }
const PASSWORD = 'S3cret-Pa55word'

const suite = useCliSuite()
const { freshDb } = suite

it('unreachable source → exit 1 naming the host, no password; a query failing half-way → exit 1; the fixed rerun resumes and completes', async () => {
  const source = await freshDb('cf_bad_src')
  const seed = await loadGenericSqlFixture('postgres', source.url)
  const state = await freshDb('cf_bad_state')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const good = genericSourceConfig(source.url, 2)
  const base = { appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, stateUrl: state.url, policies: POLICIES, load: { quotaWindowMs: 10_000 } }

  // 1. Nothing listens there.
  const unreachable = `postgres://reader:${PASSWORD}@127.0.0.1:9/legacy`
  const cfg1 = writeRunConfig({ ...base, source: { ...good, url: unreachable, connectTimeoutMs: 2000 } as Record<string, unknown> })
  const r1 = await runCli(['run', '--config', cfg1]).done
  expect(r1.code, r1.stderr).toBe(1)
  expect(r1.stderr).toMatch(/127\.0\.0\.1:9/)
  expect(r1.stderr).toMatch(/SOURCE_UNAVAILABLE/)
  expect(r1.stderr + r1.stdout).not.toContain(PASSWORD)
  expect(r1.stderr + r1.stdout).not.toContain(encodeURIComponent(PASSWORD))

  // 2. The messages query fails on its third page (division by zero at line 5): users, groups and
  //    members are planned, and the messages read up to there.
  const failing = {
    ...good,
    entities: {
      ...good.entities,
      messages: {
        query: (good.entities?.messages?.query ?? '').replace(
          /\s+FROM chat_lines\s*$/,
          ', 1 / (CASE WHEN lid = 5 THEN 0 ELSE 1 END) AS boom FROM chat_lines',
        ),
      },
    },
  }
  expect(failing.entities.messages.query).toContain('boom')
  const cfg2 = writeRunConfig({ ...base, source: failing as unknown as Record<string, unknown> })
  const r2 = await runCli(['run', '--config', cfg2]).done
  expect(r2.code, r2.stderr).toBe(1)
  expect(r2.stderr).toMatch(/division by zero/)
  expect(r2.stderr).toMatch(/SOURCE_UNAVAILABLE/)
  const partial = await ledgerRows(state.url)
  expect(partial.items).toBeGreaterThan(0)
  expect((await sandboxContents(suite.tsb.sandbox, app.id)).messages).toHaveLength(0)

  // 3. Fixed: the rerun resumes (users, groups and members are not read again; the messages go on
  //    from the cursor) and completes.
  const cfg3 = writeRunConfig({ ...base, source: good as unknown as Record<string, unknown> })
  const started = Date.now()
  const r3 = await runCli(['run', '--config', cfg3]).done
  expect(r3.code, r3.stderr.slice(-3000)).toBe(3)
  expect(r3.stdout).toMatch(/^users\s+read completed by an earlier run/m)
  expect(r3.stdout).toMatch(/^members\s+read completed by an earlier run/m)
  const messagesRead = Number(/^messages\s+(\d+) rows/m.exec(r3.stdout)?.[1])
  expect(messagesRead, r3.stdout).toBeGreaterThan(0)
  expect(messagesRead, r3.stdout).toBeLessThan(seed.chat_lines.length)

  const expected = expectMigration(expectedGeneric(seed), POLICIES, started)
  expect(compareWithExpected(expected.items, await sandboxContents(suite.tsb.sandbox, app.id))).toEqual([])
  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg3, '--json']).done).stdout) as { entity: string; legacyId: string }[]
  expect(rejects.map((r) => `${r.entity} ${r.legacyId}`).sort()).toEqual([...expected.rejects.keys()].sort())
}, 120_000)

it('a generic-sql query missing a required column → exit 2 naming the column, before any row is read', async () => {
  const source = await freshDb('cf_col_src')
  await loadGenericSqlFixture('postgres', source.url)
  const state = await freshDb('cf_col_state')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000 })
  const good = genericSourceConfig(source.url)
  const broken = {
    ...good,
    entities: {
      ...good.entities,
      // No `sent_at`: the messages query is the last one, so the users query would otherwise be read first.
      messages: { query: "SELECT lid AS id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text FROM chat_lines" },
    },
  }
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: broken as unknown as Record<string, unknown>,
  })
  const r = await runCli(['run', '--config', cfg]).done
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr).toMatch(/source\.entities\.messages\.query does not return the required column `sent_at`/)
  expect(await ledgerRows(state.url)).toMatchObject({ items: 0, cursors: 0 })
  await suite.tsb.sandbox.whenIdle()
  expect(await suite.tsb.sandbox.requests(app.id)).toHaveLength(0)
}, 60_000)

it('a lease shorter than the request timeout + 3 s → exit 2 before the source is read', async () => {
  const source = await freshDb('cf_lease_src')
  await loadGenericSqlFixture('postgres', source.url)
  const state = await freshDb('cf_lease_state')
  const app = await suite.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000 })
  // writeRunConfig sets target.timeoutMs: 10000.
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: genericSourceConfig(source.url) as unknown as Record<string, unknown>,
    load: { leaseSeconds: 10 },
  })
  const r = await runCli(['run', '--config', cfg]).done
  expect(r.code, r.stderr).toBe(2)
  expect(r.stderr).toMatch(/load\.leaseSeconds: 10 s must exceed target\.timeoutMs \(10000 ms\)/)
  expect(await ledgerRows(state.url)).toMatchObject({ items: 0, cursors: 0 })
}, 60_000)
