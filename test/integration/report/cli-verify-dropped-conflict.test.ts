/**
 * Issue 28, item 2: a change dropped by `changes.conflicts: platform-wins`, or held back by
 * `report`, is a decision the ledger recorded, and `verify` says so — never "no update was
 * recorded". Through the CLI as processes (a SQLite in-house source, a Postgres ledger, the sandbox
 * over HTTP, `webhooks receive` storing the platform's deliveries): a group renamed on the
 * platform, then renamed in the source and read again (`run --reread groups`): the update is
 * dropped or held back, nothing is sent, and verify passes (exit 0) naming the decision — for a
 * held-back change, with the commands that send it after all.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { MGMT } from '../../helpers/sandbox.ts'

const suite = useCliSuite()

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', () => r()))
  const p = (srv.address() as { port: number }).port
  await new Promise<void>((r) => srv.close(() => r()))
  return p
}

/** Polls the ledger (plain SQL, read-only) until `query` returns a row. */
async function waitForRow(url: string, query: string, ms = 30_000): Promise<void> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    const until = Date.now() + ms
    while ((await c.query(query)).rowCount === 0) {
      if (Date.now() > until) {
        throw new Error(`timed out waiting for: ${query}`)
      }
      await new Promise((r) => setTimeout(r, 200))
    }
  } finally {
    await c.end()
  }
}

const POLICIES = [
  {
    conflicts: 'platform-wins',
    summary: /1 dropped \(platform wins\)/,
    note: /group\.update dropped: the item was changed on the platform after chatferry wrote it and changes\.conflicts is platform-wins/,
  },
  {
    conflicts: 'report',
    summary: /1 CONFLICT \(changed on the platform, not applied\)/,
    note: /group\.update held back: .*changes\.conflicts: report\); to send the source's version set changes\.conflicts: source-wins then run `chatferry retry-rejected --conflicts` and `chatferry load[^`]*`/,
  },
] as const

/** A group renamed on the platform, then in the source, read again under `policy`: nothing sent, verify passes naming why. */
async function renamedOnBothSides(policy: (typeof POLICIES)[number]): Promise<void> {
  const { dir, url: sourceUrl } = await fixtureSource('cf-dropped')
  const { app, cfg } = await genericJob(suite, 'cf_dropped', { dir, url: sourceUrl })
  const config = parse(readFileSync(cfg, 'utf8')) as Record<string, unknown>
  config.changes = { conflicts: policy.conflicts }
  writeFileSync(cfg, stringify(config))
  const stateUrl = (config.state as { url: string }).url
  const out = mkdtempSync(join(tmpdir(), 'cf-dropped-out-'))
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  expect((await cli('run')).code).toBe(3)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)

  const port = await freePort()
  const receiver = runCli(
    ['webhooks', 'receive', '--config', cfg, '--public-url', `http://127.0.0.1:${port}/hooks`, '--port', String(port), '--json'],
    { CHATFERRY_MGMT_URL: suite.tsb.sandbox.url, CHATFERRY_MGMT_KEY: MGMT.key, CHATFERRY_MGMT_SECRET: MGMT.secret },
  )
  try {
    await receiver.waitFor('"listening"', 30_000)
    await app.client.updateGroup('r-general', { name: 'Renamed on the platform' })
    await waitForRow(
      stateUrl,
      `select 1 from chatferry.platform_events where platform_key = 'r-general' and trigger = 'group_updated' and origin = 'platform'`,
    )
  } finally {
    receiver.child.kill('SIGTERM')
    await receiver.done
  }
  const w = await openGenericWriter('sqlite', sourceUrl)
  await w.exec(`UPDATE rooms SET title = 'Renamed in the source' WHERE rid = 'r-general'`)
  await w.close()

  const writesBefore = (await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint === 'groups.update').length
  const reread = await cli('run', '--reread', 'groups')
  expect(reread.code, reread.stderr.slice(-3000)).toBe(0)
  expect(reread.stdout).toMatch(policy.summary)
  expect((await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint === 'groups.update')).toHaveLength(writesBefore)
  expect((await app.client.getGroup('r-general')).name).toBe('Renamed on the platform')

  const verify = await cli('verify', '--out', out)
  expect(verify.code, verify.stdout).toBe(0)
  expect(verify.stdout).not.toMatch(/no update was recorded/)
  expect(verify.stdout).toMatch(policy.note)
}

it.each(POLICIES)(
  'a group renamed on the platform and in the source under $conflicts: not sent, verify passes naming why',
  renamedOnBothSides,
  300_000,
)
