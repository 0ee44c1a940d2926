/**
 * Issue 28, item 2: `verify` does not cry wolf over what the ledger knows. Through the CLI as a
 * process (a SQLite in-house source, a Postgres ledger, the sandbox): a member removed in the
 * source and kicked on the platform by the next delta is no "member the source no longer has";
 * with the bad rows accepted, verify says verified (exit 0). A member the source lost that no
 * delta has seen yet is still a mismatch, and its advice — the delta — clears it.
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

it('a member removed in the source: verify names the delta that fixes it; after the delta kicked it, verified', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-verify')
  const { app, cfg } = await genericJob(suite, 'cf_verify_kick', { dir, url: sourceUrl })
  const out = mkdtempSync(join(tmpdir(), 'cf-verify-out-'))
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  expect((await cli('run')).code).toBe(3)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)
  const first = await cli('verify', '--out', out)
  expect(first.code, first.stdout).toBe(0)
  expect(first.stdout).toMatch(
    /^accepted rejects, not on the platform by decision: users 2, groups 2, members 1, messages \d+ \(`.* rejects -c \S+ --accepted` says who accepted them, when and why\)$/m,
  )

  // The helper bot (3) leaves r-general in the source.
  const w = await openGenericWriter('sqlite', sourceUrl)
  await w.exec(`DELETE FROM room_people WHERE rid = 'r-general' AND pid = 3`)
  await w.close()
  const stale = await cli('verify', '--out', out)
  expect(stale.code, stale.stdout).toBe(3)
  expect(stale.stdout).toMatch(
    /the ledger has 1 members the source no longer has \(removed items are not counted\): `chatferry run --delta` finds them/,
  )

  // The advice: the delta kicks her on the platform, and verify is clean again.
  const delta = await cli('run', '--delta')
  expect(delta.code, delta.stderr.slice(-2000)).toBe(0)
  const on = await sandboxContents(suite.tsb.sandbox, app.id)
  const general = on.members.filter((m) => m.key.startsWith('r-general_member_')).map((m) => m.key)
  expect(general.length).toBeGreaterThan(1)
  expect(general).not.toContain('r-general_member_3')
  const clean = await cli('verify', '--out', out)
  expect(clean.code, clean.stdout).toBe(0)
}, 180_000)

it('a row committed late below the watermark: verify names the key reconciliation, which clears it', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-verify-late')
  const { app, cfg } = await genericJob(suite, 'cf_verify_late', { dir, url: sourceUrl })
  const out = mkdtempSync(join(tmpdir(), 'cf-verify-late-out-'))
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  expect((await cli('run')).code).toBe(3)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)
  expect((await cli('run', '--delta')).code).toBe(0)

  // A line whose change time is long before the watermark (a late commit): a delta reads it only
  // when it reconciles the keys (every delta.reconcileKeysEvery-th one).
  const w = await openGenericWriter('sqlite', sourceUrl)
  await w.exec(
    `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (9301, 1, 'r-general', 'late', 'text', '2024-03-01 12:30:00.000', '2024-03-01 12:30:00.000')`,
  )
  await w.close()
  const stale = await cli('verify', '--out', out)
  expect(stale.code, stale.stdout).toBe(3)
  const advice = /the source has 1 messages the ledger never planned \(run `(chatferry [^`]+)`\)/.exec(stale.stdout)
  expect(advice?.[1], stale.stdout).toBe('chatferry run --delta --reconcile-keys')

  // The advice, as printed: the line reaches the platform and verify is clean.
  const fix = await cli(...(advice?.[1] ?? '').split(' ').slice(1))
  expect(fix.code, fix.stderr.slice(-2000)).toBe(0)
  const on = await sandboxContents(suite.tsb.sandbox, app.id)
  expect(on.messages.map((m) => m.key)).toContain('9301')
  const clean = await cli('verify', '--out', out)
  expect(clean.code, clean.stdout).toBe(0)
}, 240_000)
