/**
 * Issue 28, item 6: a rejected user is not an "unknown user". Through the CLI as a process (a
 * SQLite in-house source, a Postgres ledger, the sandbox): person 5's row is rejected (no name);
 * their line and their membership are rejected naming that — "its sender "5" was rejected (name: …)"
 * — and no placeholder user stands in for them on the platform; also in a later delta, which knows
 * the user's reject from the ledger.
 */
import { expect, it } from 'vitest'

import { G0, openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

it('a line and a membership of a rejected user are rejected naming the user\'s reject, not "unknown user"; no placeholder', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-rejected-sender')
  const w = await openGenericWriter('sqlite', sourceUrl)
  const at = sqlTime(G0 + 95 * 60_000)
  await w.exec(
    `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (9101, 5, 'r-general', 'hello from 5', 'text', '${at}', '${at}')`,
  )
  await w.exec(`INSERT INTO room_people (rid, pid, role, blocked, since) VALUES ('r-general', 5, 'participant', 0, '${at}')`)
  await w.close()
  const { app, cfg } = await genericJob(suite, 'cf_rejected_sender', { dir, url: sourceUrl })
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done

  const run = await cli('run')
  expect(run.code, run.stderr.slice(-2000)).toBe(3)
  expect(run.stdout).not.toMatch(/unknown user/)
  const rejects = await cli('rejects')
  expect(rejects.code).toBe(0)
  const lineOf = (id: string) => rejects.stdout.split('\n').find((l) => l.split('\t')[1] === id) ?? ''
  expect(lineOf('9101')).toMatch(/senderId: its sender "5" was rejected \(name: /)
  expect(lineOf('r-general/5')).toMatch(/userId: its user "5" was rejected \(name: /)
  expect(rejects.stdout).not.toMatch(/unknown user/)
  const on = await sandboxContents(suite.tsb.sandbox, app.id)
  expect(on.users.filter((u) => u.key.startsWith('placeholder-'))).toEqual([])
  expect(on.messages.map((m) => m.key)).not.toContain('9101')

  // A later delta, which reads only the new line: the user's reject is still known (from the ledger).
  const w2 = await openGenericWriter('sqlite', sourceUrl)
  const now = sqlTime(Date.now())
  await w2.exec(
    `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (9102, 5, 'r-general', 'again from 5', 'text', '${now}', '${now}')`,
  )
  await w2.close()
  const delta = await cli('run', '--delta')
  expect(delta.code, delta.stderr.slice(-2000)).toBe(3)
  const again = await cli('rejects')
  expect(again.stdout.split('\n').find((l) => l.split('\t')[1] === '9102')).toMatch(/senderId: its sender "5" was rejected \(name: /)
  expect(again.stdout).not.toMatch(/unknown user/)
  const after = await sandboxContents(suite.tsb.sandbox, app.id)
  expect(after.users.filter((u) => u.key.startsWith('placeholder-'))).toEqual([])
}, 180_000)
