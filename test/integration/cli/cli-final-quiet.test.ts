/**
 * Issue 28, item 5: a final delta whose "frozen" means frozen. Through the CLI as a process (a
 * SQLite in-house source, a Postgres ledger, the sandbox): with `--quiet-period`, the final delta
 * that found the source unchanged right after its load waits the period and checks again, so a
 * writer that wrote just after the first check is caught (exit 4, the row counted); once the
 * writer stops, the final delta — its bad rows accepted — exits 0 with the quiet window recorded,
 * `verify` says verified, and a row written after the cutover makes `verify` fail (it re-checks).
 * The bad rows include the issue's own: a line whose room and direct-message target are both NULL
 * and a second line under an id already used (the key is `(sent_at, id)`); once accepted, neither
 * keeps the final delta from exit 0 nor makes verify count a row "never planned".
 */
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'

import { genericSchemaSql, openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { oneJsonObject, useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const suite = useCliSuite()

interface Cutover {
  readonly changedRows?: number
  readonly sourceStillChanging?: boolean
  readonly changedAfterRead?: Record<string, number | null>
  readonly quietPeriodMs?: number
  readonly quietForMs?: number
}

/** The issue's bad rows: chat_lines rebuilt without its primary key (as in-house tables are), then a line to nobody and a second line 4. */
async function seedIssueBadRows(sourceUrl: string): Promise<void> {
  const [, , , lines, index] = genericSchemaSql('sqlite')
  const w = await openGenericWriter('sqlite', sourceUrl)
  await w.exec(`ALTER TABLE chat_lines RENAME TO keyed_lines; ${lines!.replace('lid integer PRIMARY KEY', 'lid integer')};
    INSERT INTO chat_lines SELECT * FROM keyed_lines; DROP TABLE keyed_lines; ${index!}`)
  const at = sqlTime(Date.UTC(2024, 2, 1, 13))
  await w.insert('chat_lines', [
    { lid: 800, author: 1, room: null, to_pid: null, body: 'to nobody', kind: 'text', posted: at, modified: at },
    { lid: 4, author: 2, room: 'r-general', to_pid: null, body: 'same id, later', kind: 'text', posted: at, modified: at },
  ])
  await w.close()
}

it('the quiet period catches a writer that slipped past the first check; a frozen source then passes with exit 0', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-quiet')
  const { cfg } = await genericJob(suite, 'cf_quiet', { dir, url: sourceUrl })
  await seedIssueBadRows(sourceUrl)
  expect((await runCli(['run', '--config', cfg]).done).code).toBe(3)
  const rejected = JSON.parse((await runCli(['rejects', '--json', '--config', cfg]).done).stdout) as { entity: string; legacyId: string }[]
  const messages = rejected.filter((r) => r.entity === 'messages').map((r) => r.legacyId)
  expect(messages).toEqual(expect.arrayContaining(['800', '4']))
  const accept = await runCli(['accept-rejects', '--all', '--reason', 'known bad rows', '--config', cfg]).done
  expect(accept.code, accept.stderr).toBe(0)

  expect((await runCli(['run', '--delta', '--config', cfg, '--quiet-period', '1s']).done).stderr).toContain('--quiet-period needs --delta --final')
  expect((await runCli(['run', '--delta', '--final', '--config', cfg, '--quiet-period', 'soon']).done).code).toBe(2)

  // The writer writes right after the first check found nothing: only the second check can see it.
  const final = runCli(['run', '--delta', '--final', '--quiet-period', '4s', '--config', cfg, '--json'])
  await final.waitFor('waiting the quiet period', 60_000)
  const w = await openGenericWriter('sqlite', sourceUrl)
  const now = sqlTime(Date.now())
  await w.insert('chat_lines', [{ lid: 900, author: 1, room: 'r-general', to_pid: null, body: 'one more', kind: 'text', posted: now, modified: now }])
  await w.close()
  const caught = await final.done
  expect(caught.code, caught.stderr.slice(-2000)).toBe(4)
  const warned = oneJsonObject(caught.stdout) as { status: string; cutover: Cutover }
  expect(warned.status).toBe('source-changing')
  expect(warned.cutover).toMatchObject({ sourceStillChanging: true, quietPeriodMs: 4000 })
  expect(warned.cutover.changedAfterRead?.messages).toBe(1)

  // Frozen now: the final delta loads the late line and stays clean through its quiet period.
  const clean = await runCli(['run', '--delta', '--final', '--quiet-period', '1s', '--config', cfg, '--json']).done
  expect(clean.code, clean.stderr.slice(-2000)).toBe(0)
  const done = oneJsonObject(clean.stdout) as { cutover: Cutover }
  expect(done.cutover).toMatchObject({ changedRows: 0, sourceStillChanging: false, quietPeriodMs: 1000 })
  expect(done.cutover.quietForMs).toBeGreaterThanOrEqual(1000)
  expect(clean.stderr).toMatch(/no source row changed in the \S+ since the final read began: the source is frozen/)

  // verify re-checks the cutover: clean now; a row written after it is a mismatch (exit 3).
  const out = mkdtempSync(join(tmpdir(), 'cf-quiet-verify-'))
  const verified = await runCli(['verify', '--config', cfg, '--out', out]).done
  expect(verified.code, verified.stdout + verified.stderr.slice(-2000)).toBe(0)
  // Both rows are read and accounted for: the source's row count is the ledger's, and no mismatch names them.
  expect(verified.stdout).toMatch(/^messages( +\d+){6} +(\d+) +\2$/m)
  expect(verified.stdout).not.toMatch(/never planned|^ +duplicate messages /m)
  const w2 = await openGenericWriter('sqlite', sourceUrl)
  const later = sqlTime(Date.now())
  await w2.insert('chat_lines', [
    { lid: 901, author: 1, room: 'r-general', to_pid: null, body: 'after the cutover', kind: 'text', posted: later, modified: later },
  ])
  await w2.close()
  const after = await runCli(['verify', '--config', cfg, '--out', out]).done
  expect(after.code, after.stdout).toBe(3)
  expect(after.stdout).toMatch(
    /1 messages changed in the source after the final delta's read began at \S+ \(the cutover\): the legacy system is still written/,
  )
}, 180_000)
