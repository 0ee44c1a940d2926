/**
 * Issue 28, item 3: a policy change reaches the platform. Through the CLI as a process (a SQLite
 * in-house source, a Postgres ledger, the sandbox over HTTP): a long message loaded as several parts
 * under `longText: split`; the policy switched to `truncate`; `plan` shows the edit and the
 * removals and names `run --reread`; a plain `run` reads nothing again; `cursors` lists the
 * reads and `cursors reset` asks for --yes; `run --reread messages` edits the first part to its
 * truncated text and deletes the two parts no longer needed — checked in the sandbox's own tables
 * and request log, not in the ledger — and `verify` is clean.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { expect, it } from 'vitest'
import { parse, stringify } from 'yaml'

import { messageMuid, partMuid } from '../../../mappings/index.ts'
import { LIMITS } from '../../../src/target/schemas.ts'
import { G0, openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'

const suite = useCliSuite()

/** About 30 KB of words: several parts under the 10 KB of a message's data. */
const LONG = Array.from({ length: 4200 }, (_, i) => `word${i}`).join(' ')

it('longText split → truncate: plan shows it, run --reread edits the first part and deletes the others on the platform', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-replan')
  const w = await openGenericWriter('sqlite', sourceUrl)
  const at = sqlTime(G0 + 90 * 60_000)
  await w.exec(
    `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (9001, 1, 'r-general', '${LONG}', 'text', '${at}', '${at}')`,
  )
  await w.close()
  const { app, cfg } = await genericJob(suite, 'cf_replan', { dir, url: sourceUrl })
  const out = mkdtempSync(join(tmpdir(), 'cf-replan-out-'))
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  const muid = messageMuid('9001')
  const message = async (key: string) => (await sandboxContents(suite.tsb.sandbox, app.id)).messages.find((m) => m.key === key)?.row

  const first = await cli('run')
  expect(first.code, first.stderr.slice(-2000)).toBe(3)
  const parts = (await sandboxContents(suite.tsb.sandbox, app.id)).messages.filter((m) => m.key === muid || m.key.startsWith(`${muid}-p`))
  expect(parts.map((m) => m.key)).toEqual([muid, ...Array.from({ length: parts.length - 1 }, (_, i) => partMuid(muid, i + 2))])
  expect(parts.length).toBeGreaterThanOrEqual(3)
  expect(parts.map((m) => m.row.deleted_at)).toEqual(parts.map(() => null))
  const later = parts.length - 1

  // The operator's policy change.
  const config = parse(readFileSync(cfg, 'utf8')) as Record<string, Record<string, unknown>>
  config.policies = { ...config.policies, longText: { mode: 'truncate' } }
  writeFileSync(cfg, stringify(config))

  const plan = await cli('plan', '--out', out)
  expect(plan.code, plan.stderr.slice(-2000)).not.toBe(1)
  expect(plan.stdout).toMatch(/updates of loaded messages: .*1 message\.edit \(apply/)
  expect(plan.stdout).toMatch(new RegExp(`updates of loaded messages: .*${later} message\\.delete \\(apply`))
  expect(plan.stdout).toMatch(/`run --reread messages`/)

  // A plain run reads nothing again and changes nothing (what the issue found).
  const before = (await suite.tsb.sandbox.requests(app.id)).length
  const plain = await cli('run')
  expect(plain.stdout).toMatch(/^messages\s+read completed by an earlier run \(--reread messages reads it again\)$/m)
  expect((await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint.startsWith('messages.'))).toHaveLength(0)
  expect((await suite.tsb.sandbox.requests(app.id)).length).toBeGreaterThanOrEqual(before)

  // The cursors, listed; a reset without --yes changes nothing.
  const listed = await cli('cursors')
  expect(listed.code, listed.stderr).toBe(0)
  expect(listed.stdout).toMatch(/^ENTITY\s+READ\s+WATERMARK\s+SAVED$/m)
  expect(listed.stdout).toMatch(/^messages\s+complete\s+\d{4}-\d\d-\d\dT\S+Z\s+\S+$/m)
  const unconfirmed = await cli('cursors', 'reset', '--entity', 'mesages')
  expect(unconfirmed.code).toBe(2)
  expect(unconfirmed.stderr).toMatch(/unknown entity "mesages" \(did you mean messages\?\)/)
  const noYes = await cli('cursors', 'reset', '--entity', 'messages')
  expect(noYes.code).toBe(2)
  expect(noYes.stderr).toMatch(/add --yes to do it/)
  expect((await cli('cursors')).stdout).toMatch(/^messages\s+complete/m)

  // The one command that applies it.
  const reread = await cli('run', '--reread', 'messages')
  expect([0, 3], reread.stderr.slice(-3000)).toContain(reread.code)

  // The platform, as the sandbox holds it: the first part is the truncated text, the others deleted.
  const head = await message(muid)
  const data = (typeof head?.data === 'string' ? JSON.parse(head.data) : head?.data) as { text: string }
  expect(data.text.endsWith(' […]')).toBe(true)
  expect(data.text.length).toBeLessThan(LONG.length)
  expect(Buffer.byteLength(JSON.stringify(data))).toBeLessThanOrEqual(LIMITS.MESSAGE_DATA_BYTES_MAX)
  expect(LONG.startsWith(data.text.slice(0, -' […]'.length))).toBe(true)
  for (const { key } of parts.slice(1)) {
    expect((await message(key))?.deleted_at, key).not.toBeNull()
  }
  const writes = (await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint.startsWith('messages.') && r.status === 200)
  expect(writes.filter((r) => r.endpoint === 'messages.update')).toHaveLength(1)
  expect(writes.filter((r) => r.endpoint === 'messages.delete')).toHaveLength(later)

  // Nothing more to do: the same by hand (cursors reset, then run) reads every message again and
  // sends nothing, and verify agrees with the platform.
  const reset = await cli('cursors', 'reset', '--entity', 'messages', '--yes')
  expect(reset.code, reset.stderr).toBe(0)
  expect(reset.stdout).toMatch(/^reset the read of messages of job \S+; `.*run -c \S+` reads it again/m)
  expect((await cli('cursors')).stdout).toMatch(/^messages\s+not started\s+-\s+-$/m)
  const again = await cli('run')
  expect([0, 3]).toContain(again.code)
  expect(again.stdout).not.toMatch(/^messages\s+read completed/m)
  expect((await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint.startsWith('messages.') && r.status === 200)).toHaveLength(1 + later)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)
  const verify = await cli('verify', '--out', out)
  expect(verify.code, verify.stdout).toBe(0)
}, 300_000)

it('a long message shortened in the source: run --delta edits its first part and deletes the parts it no longer has', async () => {
  const { dir, url: sourceUrl } = await fixtureSource('cf-replan-delta')
  const w = await openGenericWriter('sqlite', sourceUrl)
  const at = sqlTime(G0 + 90 * 60_000)
  await w.exec(
    `INSERT INTO chat_lines (lid, author, room, body, kind, posted, modified) VALUES (9002, 1, 'r-general', '${LONG}', 'text', '${at}', '${at}')`,
  )
  const { app, cfg } = await genericJob(suite, 'cf_replan_delta', { dir, url: sourceUrl })
  const cli = (...args: string[]) => runCli([...args, '--config', cfg]).done
  const muid = messageMuid('9002')
  expect((await cli('run')).code).toBe(3)
  const loaded = (await sandboxContents(suite.tsb.sandbox, app.id)).messages.filter((m) => m.key === muid || m.key.startsWith(`${muid}-p`))
  expect(loaded.length).toBeGreaterThanOrEqual(3)

  await w.exec(`UPDATE chat_lines SET body = 'shorter now', edited = '${sqlTime(Date.now())}', modified = '${sqlTime(Date.now())}' WHERE lid = 9002`)
  await w.close()
  const delta = await cli('run', '--delta')
  expect([0, 3], delta.stderr.slice(-3000)).toContain(delta.code)
  const now = (await sandboxContents(suite.tsb.sandbox, app.id)).messages.filter((m) => m.key === muid || m.key.startsWith(`${muid}-p`))
  const head = now.find((m) => m.key === muid)?.row
  const data = (typeof head?.data === 'string' ? JSON.parse(head.data) : head?.data) as { text?: string } | undefined
  expect(data?.text).toBe('shorter now')
  expect(now.filter((m) => m.key !== muid).map((m) => m.row.deleted_at === null)).toEqual(loaded.slice(1).map(() => false))
  const deletes = (await suite.tsb.sandbox.requests(app.id)).filter((r) => r.endpoint === 'messages.delete' && r.status === 200)
  expect(deletes).toHaveLength(loaded.length - 1)
}, 300_000)
