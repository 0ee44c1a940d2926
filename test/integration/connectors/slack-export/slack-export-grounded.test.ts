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

import { GR, GROUNDED_TOKEN, type GroundedFixture, groundedMessageId, writeGroundedSlack } from '../../../fixtures/slack-export/grounded.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { type SandboxContents, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

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

  const legacyOf = (row: Record<string, unknown>) =>
    ((row.metadata ?? (row.data as Record<string, unknown>)?.metadata) as { legacy?: { id?: string } } | null)?.legacy?.id
  const userByLegacy = () => new Map(got.users.map((u) => [legacyOf(u.row), u]))

  it("users: e-mails in metadata.email (userEmails: metadata); every integration bot under its name, none 'Unknown user'", () => {
    const users = userByLegacy()
    // Hand-written from the fixture: profile.email → metadata.email; bots named by README rules 1-4.
    const want: Record<string, { name: string; email?: string; bot?: boolean }> = {
      [GR.alice]: { name: 'Alice Adams', email: 'alice@acme.example' },
      [GR.bob]: { name: 'Bob Brown', email: 'bob@acme.example' },
      [GR.carol]: { name: 'Carol Chen' },
      [GR.jenkins]: { name: 'Jenkins CI', bot: true }, // bot_add's bot_link label
      [GR.github]: { name: 'GitHub', bot: true }, // bot_profile.name
      [GR.circle]: { name: 'circleci', bot: true }, // the username it posted as
      [GR.deploy]: { name: 'Deploy Bot', bot: true }, // integration_logs.json app_type of its app_id
    }
    expect([...users.keys()].sort()).toEqual(Object.keys(want).sort())
    for (const [id, w] of Object.entries(want)) {
      const row = users.get(id)?.row as { name: string; metadata: { email?: string }; tags: string[] }
      expect(row.name, id).toBe(w.name)
      expect(row.metadata.email, id).toBe(w.email)
      expect(row.tags.includes('bot'), id).toBe(w.bot === true)
    }
  })

  it('groups: created written as a string is the creation time; the refused one and its rows are rejects naming its cause', () => {
    const created = Object.fromEntries(got.groups.map((g) => [legacyOf(g.row), Number(g.row.created_at)]))
    expect(created).toEqual({ [GR.random]: 1_709_546_400 - 900_000, [GR.general]: 1_709_546_400 - 800_000 })
    expect(got.members).toHaveLength(5)
    expect(outputs).toContain('created is not a time in epoch seconds')
    expect(outputs).not.toContain('unknown group')
  })

  it('messages: every piece of text arrives as the README renders it', () => {
    const byLegacy = new Map(got.messages.map((m) => [legacyOf(m.row), m.row]))
    const users = userByLegacy()
    const uid = (legacy: string) => users.get(legacy)?.key
    const file = (id: string, name: string) => `https://files.slack.com/files-pri/T061A1R1R-${id}/${name}`
    // [message n, sender, text] — written by hand from the fixture and the README's rules.
    const want: [number, string, string][] = [
      [1, GR.jenkins, 'Nightly build\nBuild #42 (https://ci.acme.example/job/42)\nFailed in stage *test*\nBranch: main\nDuration: 4 min\nJenkins'],
      [2, GR.github, '1 new commit pushed to `main`\n\n`a1b2c3d` Fix the login race - Alice\nacme/app (https://github.com/acme/app)'],
      [3, GR.circle, 'Deploy finished'],
      [4, GR.bob, 'Q1 numbers:\n\nRegion | Sales\nEMEA | 120'],
      [5, GR.alice, 'see #random and #random and #random and #C0UNKNOWN1, mail ops@acme.example, https://acme.example/wiki'],
      [6, GR.alice, `here is the report report.pdf (${file(GR.file, 'report.pdf')})`],
      [8, GR.bob, 'hello'],
      [9, GR.deploy, 'Deployed v7'],
    ]
    // The bot_add (0) is a system message (systemMessages: skip); the refused conversation's (7) a reject.
    expect([...byLegacy.keys()].sort()).toEqual(want.map(([n]) => groundedMessageId(n)).sort())
    for (const [n, sender, text] of want) {
      const row = byLegacy.get(groundedMessageId(n)) as { sender: string; data: { text: string } }
      expect(row.data.text, `message ${n}`).toBe(text)
      expect(row.sender, `message ${n}`).toBe(uid(sender))
    }
    const files = (byLegacy.get(groundedMessageId(6)) as { data: { attachments: { url: string; name: string }[] } }).data.attachments
    expect(files.map((f) => [f.name, f.url])).toEqual([
      ['report.pdf', file(GR.file, 'report.pdf')],
      ['demo.mp4', file(GR.video, 'demo.mp4')],
    ])
  })
})
