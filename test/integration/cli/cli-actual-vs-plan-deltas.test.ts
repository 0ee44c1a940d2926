/**
 * Issue 28, item 2: verify's "actual vs plan" compares with what every run since the plan planned,
 * not only the last `plan`. Through the CLI as a process (a SQLite in-house source, a Postgres
 * ledger, the sandbox): plan, run, two lines added to the source, run --delta, verify: the delta's
 * two new messages count as planned (the JSON report says so, and the HTML sign-off for messages
 * has no "created or present +2 vs plan").
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const suite = useCliSuite()

it('the new items of the deltas since the plan count as planned in the sign-off', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-avp')
  const { cfg } = await genericJob(suite, 'cf_avp', { dir, url: sourceUrl })
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  const planOut = mkdtempSync(join(tmpdir(), 'cf-avp-plan-'))
  expect((await cli('plan', '--out', planOut)).code).not.toBe(1)
  expect((await cli('run')).code).toBe(3)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)

  const w = await openGenericWriter('sqlite', sourceUrl)
  const now = sqlTime(Date.now())
  for (const lid of [9201, 9202]) {
    await w.exec(
      `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (${lid}, 1, 'r-general', 'after the plan ${lid}', 'text', '${now}', '${now}')`,
    )
  }
  await w.close()
  const delta = await cli('run', '--delta')
  expect(delta.code, delta.stderr.slice(-2000)).toBe(0)

  const out = mkdtempSync(join(tmpdir(), 'cf-avp-verify-'))
  const verify = await cli('verify', '--out', out)
  expect(verify.code, verify.stdout).toBe(0)
  const files = readdirSync(out)
  const report = JSON.parse(readFileSync(join(out, files.find((f) => f.endsWith('.json')) as string), 'utf8')) as {
    actualVsPlan: { deltasSince?: number; entities: Record<string, { plan: { create: number; loaded: number; createdSince?: number } | null }> }
  }
  expect(report.actualVsPlan.deltasSince).toBe(1)
  expect(report.actualVsPlan.entities.messages?.plan?.createdSince).toBe(2)
  const html = readFileSync(join(out, files.find((f) => f.endsWith('.html')) as string), 'utf8')
  const row = /<tr><td>messages<\/td>.*?<\/tr>/s.exec(html.slice(html.indexOf('actual-vs-plan')))?.[0] ?? ''
  expect(row).toContain('+ 2 by deltas since')
  expect(row).not.toMatch(/created or present/)
}, 240_000)
