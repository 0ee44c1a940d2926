/**
 * End to end over an export shaped like genuine Slack exports (test/fixtures/slack-export/
 * grounded.ts): `chatferry run` and `chatferry rejects` (processes) → the sandbox. The export
 * token, planted in every URL field of its files and in a link, reaches neither the platform (its
 * stored items and its request log), nor the ledger (every table, dumped as text), a report, or
 * the CLI's output. Each planted row is checked against what the READMEs say must come of it,
 * written out by hand here and in the fixture.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { dirname, join } from 'node:path'

import pg from 'pg'
import { beforeAll, describe, expect, it } from 'vitest'

import { GROUNDED_TOKEN, type GroundedFixture, writeGroundedSlack } from '../fixtures/slack-export/grounded.ts'
import { createTestDatabase, type TestDatabase } from '../helpers/db.ts'
import { runCli } from '../helpers/ledger-fixtures.ts'
import { dropWithin } from '../helpers/loader-harness.ts'
import { type SandboxContents, sandboxContents, writeRunConfig } from '../helpers/run-e2e.ts'
import { type TestApp, useFileSandbox } from '../helpers/sandbox.ts'

const box = useFileSandbox()

/** Every row of every table of the ledger's database, as text. */
async function ledgerText(url: string): Promise<string> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const tables = await c.query<{ s: string; t: string }>(
      `select table_schema as s, table_name as t from information_schema.tables
        where table_schema not in ('pg_catalog', 'information_schema') and table_type = 'BASE TABLE'`,
    )
    const parts: string[] = []
    for (const { s, t } of tables.rows) {
      const rows = await c.query<{ r: string }>(`select x::text as r from "${s}"."${t}" x`)
      parts.push(...rows.rows.map((r) => r.r))
    }
    expect(tables.rows.length).toBeGreaterThan(3)
    return parts.join('\n')
  } finally {
    await c.end()
  }
}

/** Every file the run wrote beside its configuration (reports, logs), as text. */
function filesText(dir: string): string {
  const out: string[] = []
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      out.push(filesText(path))
    } else if (name !== 'chatferry.yaml') {
      out.push(readFileSync(path, 'latin1'))
    }
  }
  return out.join('\n')
}

describe.each(['zip', 'folder'] as const)('chatferry run: a Slack export as genuine exports are, as a %s', (layout) => {
  let fx: GroundedFixture
  let app: TestApp
  let state: TestDatabase
  let cfg: string
  let got: SandboxContents
  let outputs: string

  beforeAll(async () => {
    fx = await writeGroundedSlack(layout)
    box.cleanups.push(() => fx.drop())
    state = await createTestDatabase('cf_slack_grounded')
    box.cleanups.push(() => dropWithin(state))
    app = await box.tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    cfg = writeRunConfig({
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      stateUrl: state.url,
      source: { connector: 'slack-export', path: fx.path, pageSize: 3 },
      policies: { retention: { oldMessages: 'send' } },
      load: { quotaWindowMs: 10_000 },
    })
    const run = await runCli(['run', '--config', cfg]).done
    // The refused conversation's rows are rejects: exit 3.
    expect(run.code, run.stderr.slice(-3000)).toBe(3)
    const rejects = await runCli(['rejects', '--config', cfg]).done
    outputs = [run.stdout, run.stderr, rejects.stdout, rejects.stderr].join('\n')
    got = await sandboxContents(box.tsb.sandbox, app.id)
  }, 120_000)

  it('the export token reaches no stored item, request, ledger row, report or output', async () => {
    expect(got.messages.length).toBeGreaterThan(5)
    const requests = await box.tsb.sandbox.requests(app.id)
    expect(requests.length).toBeGreaterThan(0)
    const places: Record<string, string> = {
      'the platform': JSON.stringify(got),
      'the request log': JSON.stringify(requests),
      'the ledger': await ledgerText(state.url),
      'reports and logs': filesText(dirname(cfg)),
      'the CLI output': outputs,
    }
    for (const [where, text] of Object.entries(places)) {
      expect(text.includes(GROUNDED_TOKEN), where).toBe(false)
      expect(text.includes('xoxe-'), where).toBe(false)
    }
    // The files are still there, without the token.
    expect(places['the platform']).toContain('https://files.slack.com/files-pri/T061A1R1R-F06FILE001/report.pdf')
  })
})
