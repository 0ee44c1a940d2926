/**
 * Issue 28, item 2: every piece of verify advice names a command that fixes that case. Through the
 * CLI as a process (a SQLite in-house source, a Postgres ledger, the sandbox over HTTP), each kind
 * of mismatch is made on the platform with the platform's own calls, verify names the fix (exit
 * 3), the advice is run exactly as printed, and verify is clean (exit 0):
 *
 * - done in the ledger, absent on the platform (a member kicked and a message deleted by someone
 *   on the platform): `chatferry verify --replan`, then `chatferry load` imports them again; the
 *   conversation's count difference points at the messages named in it, and is explained once they are;
 * - removed in the ledger, still on the platform (a kicked member added back on the platform):
 *   the same two commands send the kick again;
 * - on the platform, but rejected in the ledger (the state a request answered with an error after
 *   its commit leaves; set on the ledger by SQL, as no command makes it on demand): the same two
 *   commands send it, the platform answers "already exists", and the ledger marks it done;
 * - on the platform, but skipped in the ledger: no command removes it, and verify says so;
 * - a field changed on the platform by hand: no command restores it, and verify says so;
 * - on the platform, unknown to the ledger (a user another tool imported): no chatferry command
 *   removes it, and verify says so plainly with the platform call that does; once it is gone
 *   from the platform, verify is clean;
 * - a second copy of a message on the platform: verify says no command deletes a copy and names
 *   the platform call that does, and that call removes it;
 * - an update the platform rejected (a rename of a user deactivated by hand on the platform): verify
 *   names `rejects`, `retry-rejected` and `load`; once the cause is fixed, those clear it.
 *
 * The cases share one job, loaded once: each but the last leaves it verified clean, as the next
 * one starts from (the last leaves two mismatches no command fixes).
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import pg from 'pg'
import { expect, it } from 'vitest'
import { parse } from 'yaml'

import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { useCliSuite } from '../../helpers/cli-suite.ts'
import { fixtureSource, genericJob } from '../../helpers/generic-job.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents } from '../../helpers/run-e2e.ts'
import { http, importRaw } from '../../helpers/sandbox.ts'

const suite = useCliSuite()

/** The two commands a replan note advises, as printed: `` `<replan>` plans it again, then `<load>` ``. */
function advisedCommands(stdout: string, what: string): string[] {
  const line = stdout.split('\n').find((l) => l.includes(what))
  const m = /: `(chatferry [^`]+)` plans it again, then `(chatferry [^`]+)` \(/.exec(line ?? '')
  expect(m, stdout).not.toBeNull()
  return [m?.[1] ?? '', m?.[2] ?? '']
}

/** A job loaded, its known-bad rows accepted, verified clean; `cli` runs a command of it. */
async function loadedJob(prefix: string) {
  const { dir, url } = await fixtureSource(prefix)
  const { app, cfg } = await genericJob(suite, prefix.replaceAll('-', '_'), { dir, url })
  const out = mkdtempSync(join(tmpdir(), `${prefix}-out-`))
  const cli = (...args: string[]) => runCli([...args, '--config', cfg, ...(args[0] === 'verify' ? ['--out', out] : [])]).done
  expect((await cli('run')).code).toBe(3)
  expect((await cli('accept-rejects', '--all', '--reason', 'known bad rows')).code).toBe(0)
  const first = await cli('verify')
  expect(first.code, first.stdout).toBe(0)
  const stateUrl = (parse(readFileSync(cfg, 'utf8')) as { state: { url: string } }).state.url
  return { app, url, cli, stateUrl }
}

/** The one job the cases share: loaded on first use. */
let shared: ReturnType<typeof loadedJob> | undefined
const sharedJob = () => (shared ??= loadedJob('cf-verify-replan'))

/** Runs one statement on the job's ledger (plain SQL, as a test sets up a state no command makes on demand). */
async function onLedger(url: string, text: string, values: unknown[] = []): Promise<pg.QueryResult> {
  const c = new pg.Client({ connectionString: url })
  await c.connect()
  try {
    return await c.query(text, values)
  } finally {
    await c.end()
  }
}

/** Runs each advised command as printed (the configuration appended); returns their outputs. */
async function runAdvice(cli: (...args: string[]) => Promise<{ code: number | null; stdout: string; stderr: string }>, commands: string[]) {
  const outs = []
  for (const c of commands) {
    const r = await cli(...c.split(' ').slice(1))
    expect(r.code, `${c}\n${r.stdout}\n${r.stderr.slice(-2000)}`).toBe(0)
    outs.push(r)
  }
  return outs
}

it('done in the ledger, absent on the platform: verify --replan then load imports them again; a user unknown to the ledger and a copied message are named as no command can fix them', async () => {
  const { app, cli } = await sharedJob()
  const headers = { apikey: app.apiKey }
  const before = await sandboxContents(suite.tsb.sandbox, app.id)
  const message = before.messages.find((m) => m.row.deleted_at === null || m.row.deleted_at === undefined)
  expect(message).toBeDefined()
  const muid = message?.key ?? ''

  // Someone on the platform kicks a member and deletes a message for good.
  expect((await http(`${app.baseUrl}/groups/r-general/members/3`, { method: 'DELETE', headers })).status).toBe(200)
  expect((await http(`${app.baseUrl}/messages/${String(message?.row.id)}`, { method: 'DELETE', headers, body: { permanent: true } })).status).toBe(
    200,
  )

  const broken = await cli('verify')
  expect(broken.code, broken.stdout).toBe(3)
  expect(broken.stdout).toMatch(
    /^ {2}missing members r-general_member_3 .*— done in the ledger, absent on the platform: `chatferry verify --replan` plans it again, then `chatferry load` \(it is imported again\)$/m,
  )
  expect(broken.stdout).toContain(`missing messages ${muid} `)
  expect(broken.stdout).toMatch(
    /^ {2}count messages \S+ messages: expected \d+, found \d+ — conversation \S+: \d+ done in the ledger, \d+ on the platform; the messages named in it say what fixes each$/m,
  )
  const [replan, load] = await runAdvice(cli, advisedCommands(broken.stdout, 'missing members r-general_member_3'))
  expect(replan?.stdout).toMatch(/^planned again \(--replan\): 2 items to import, 0 removals to send: run `chatferry load`$/m)
  expect(replan?.stdout).toMatch(/^ {2}explained count messages .*; every message named in it is explained$/m)
  expect(replan?.stdout).toMatch(/^verified: /m)
  expect(load?.code).toBe(0)

  const after = await sandboxContents(suite.tsb.sandbox, app.id)
  expect(after.members.map((m) => m.key)).toContain('r-general_member_3')
  expect(after.messages.map((m) => m.key)).toContain(muid)
  // (Verify clean once both are imported again: the last verify below, which runs once the user and the copy are gone too.)

  // A user another tool imported into the app, and a second copy of a message (written into the
  // sandbox's store: the platform makes none by muid): verify names both, and says no chatferry command removes them.
  expect((await importRaw(app, 'users', { users: { stranger: { uid: 'stranger', name: 'Stranger' } } })).status).toBe(200)
  const copy = await sql<{
    id: number
  }>`insert into sandbox.messages (app_id, muid, conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, updated_at, imported_at_ms)
      select app_id, 'copy', conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, updated_at, 0
      from sandbox.messages where app_id = ${app.id} and muid = ${muid} returning id`.execute(suite.tsb.sandbox.store)
  const copyId = String(copy.rows[0]?.id)
  const foreign = await cli('verify')
  expect(foreign.code, foreign.stdout).toBe(3)
  expect(foreign.stdout).toContain(
    `  duplicate messages ${muid} (legacy ${muid}) — message ${copyId} is a second copy (same legacy id); no chatferry command deletes a copy (it cannot tell which one people replied to or reacted to). ` +
      `Check both; delete the one to drop on the platform (DELETE /messages/${copyId} with permanent: true)`,
  )
  // The platform call it names removes the copy.
  expect((await http(`${app.baseUrl}/messages/${copyId}`, { method: 'DELETE', headers, body: { permanent: true } })).status).toBe(200)
  expect(foreign.stdout).toContain(
    '  unexpected users stranger — on the platform, unknown to the ledger: this job did not create it (another job on this app, a person, an integration or a script did); ' +
      'no chatferry command removes what this job did not load. Check who created it; if it must go, delete it on the platform (DELETE /users/{uid} with permanent: true)',
  )
  // The sandbox has no user delete call: the user is removed from its store, as the platform's DELETE would.
  await sql`delete from sandbox.users where app_id = ${app.id} and uid = 'stranger'`.execute(suite.tsb.sandbox.store)
  const gone = await cli('verify')
  expect(gone.code, gone.stdout).toBe(0)
  expect(gone.stdout).toMatch(/^verified: no mismatch$/m)
}, 300_000)

it('removed in the ledger, still on the platform: verify --replan then load sends the kick again', async () => {
  const { app, url, cli } = await sharedJob()
  const w = await openGenericWriter('sqlite', url)
  await w.exec(`DELETE FROM room_people WHERE rid = 'r-general' AND pid = 3`)
  await w.close()
  expect((await cli('run', '--delta')).code).toBe(0)
  expect((await sandboxContents(suite.tsb.sandbox, app.id)).members.map((m) => m.key)).not.toContain('r-general_member_3')

  // Someone on the platform adds her back.
  const added = await http(`${app.baseUrl}/groups/r-general/members`, { headers: { apikey: app.apiKey }, body: { participants: ['3'] } })
  expect(added.status, JSON.stringify(added.body)).toBe(200)
  expect((await sandboxContents(suite.tsb.sandbox, app.id)).members.map((m) => m.key)).toContain('r-general_member_3')

  const broken = await cli('verify')
  expect(broken.code, broken.stdout).toBe(3)
  expect(broken.stdout).toMatch(
    /^ {2}unexpected members r-general_member_3 .*— removed in the ledger \(member\.kick done\), still on the platform: `chatferry verify --replan` plans it again, then `chatferry load` \(the removal is sent again\)$/m,
  )
  const [replan] = await runAdvice(cli, advisedCommands(broken.stdout, 'unexpected members r-general_member_3'))
  expect(replan?.stdout).toMatch(/^planned again \(--replan\): 0 items to import, 1 removals to send: run `chatferry load`$/m)

  expect((await sandboxContents(suite.tsb.sandbox, app.id)).members.map((m) => m.key)).not.toContain('r-general_member_3')
  const clean = await cli('verify')
  expect(clean.code, clean.stdout).toBe(0)
}, 300_000)

it('an update the platform rejected: verify names rejects, retry-rejected and load; once its cause is fixed they clear it', async () => {
  const { app, url, cli } = await sharedJob()
  // Someone deactivates user 1 on the platform; the source renames her; the delta's rename is refused.
  expect((await http(`${app.baseUrl}/users`, { method: 'DELETE', headers: { apikey: app.apiKey }, body: { uidsToDeactivate: ['1'] } })).status).toBe(
    200,
  )
  const w = await openGenericWriter('sqlite', url)
  await w.exec(`UPDATE people SET full_name = 'Renamed in the source', modified_s = ${Math.floor(Date.now() / 1000)} WHERE pid = 1`)
  await w.close()
  const delta = await cli('run', '--delta')
  expect(delta.code, delta.stderr.slice(-2000)).toBe(3)

  const broken = await cli('verify')
  expect(broken.code, broken.stdout).toBe(3)
  const line = broken.stdout.split('\n').find((l) => l.includes('rejected by the platform'))
  expect(line, broken.stdout).toMatch(
    /— user\.update rejected by the platform: `[^`]*rejects[^`]*` says why; once its cause is fixed, `chatferry retry-rejected` plans it again and `chatferry load` sends it$/,
  )
  const advised = /`(chatferry retry-rejected)` plans it again and `(chatferry load)`/.exec(line ?? '')

  // The cause: she was deactivated by hand; she is reactivated, then the advice runs as printed.
  expect((await http(`${app.baseUrl}/users`, { method: 'PUT', headers: { apikey: app.apiKey }, body: { uidsToActivate: ['1'] } })).status).toBe(200)
  await runAdvice(cli, [advised?.[1] ?? '', advised?.[2] ?? ''])
  const on = await sandboxContents(suite.tsb.sandbox, app.id)
  expect(on.users.find((u) => u.key === '1')?.row.name).toBe('Renamed in the source')
  const clean = await cli('verify')
  expect(clean.code, clean.stdout).toBe(0)
}, 300_000)

it('on the platform but rejected in the ledger: verify --replan then load settles it done; a field changed by hand and an item skipped in the ledger: verify says no command fixes them', async () => {
  const { app, stateUrl, cli } = await sharedJob()
  const done = await onLedger(
    stateUrl,
    `select target_key, legacy_id from chatferry.items where entity = 'users' and status = 'done' order by target_key limit 2`,
  )
  const [rejected, skipped] = done.rows.map((r: { target_key: string }) => r.target_key)
  const skippedLegacy = (done.rows[1] as { legacy_id: string } | undefined)?.legacy_id
  expect(skipped).toBeDefined()
  await onLedger(
    stateUrl,
    `update chatferry.items set status = 'rejected', last_error_code = 'HTTP_500', last_error_message = 'answered 500 after its commit' where entity = 'users' and target_key = $1`,
    [rejected],
  )

  const broken = await cli('verify')
  expect(broken.code, broken.stdout).toBe(3)
  const what = `unexpected users ${String(rejected)} `
  expect(broken.stdout).toContain(
    `— on the platform, but rejected in the ledger: \`chatferry verify --replan\` plans it again, then \`chatferry load\` (the platform answers that it exists and the ledger marks it done)`,
  )
  const [replan] = await runAdvice(cli, advisedCommands(broken.stdout, what))
  expect(replan?.stdout).toMatch(/^planned again \(--replan\): 1 items to import, 0 removals to send: run `chatferry load`$/m)
  const settled = await onLedger(stateUrl, `select status from chatferry.items where entity = 'users' and target_key = $1`, [rejected])
  expect(settled.rows[0]?.status).toBe('done')
  const clean = await cli('verify')
  expect(clean.code, clean.stdout).toBe(0)

  // Renamed on the platform by hand: verify says plainly that no command restores it.
  const renamed = await http(`${app.baseUrl}/users/${String(rejected)}`, {
    method: 'PUT',
    headers: { apikey: app.apiKey },
    body: { name: 'Changed by hand' },
  })
  expect(renamed.status, JSON.stringify(renamed.body)).toBe(200)
  // Skipped by a policy, yet on the platform (one verify reads both cases).
  await onLedger(stateUrl, `update chatferry.items set status = 'skipped' where entity = 'users' and target_key = $1`, [skipped])
  const changed = await cli('verify')
  expect(changed.code, changed.stdout).toBe(3)
  expect(changed.stdout).toMatch(
    new RegExp(
      `^ {2}field users ${String(rejected)} .*name: expected .*, found "Changed by hand" — differs from the ledger's payload and the updates applied to it: changed on the platform after chatferry wrote it; ` +
        "no chatferry command restores it \\(a loaded item's fields are sent again only when the source changes them\\)\\. " +
        'Check who changed it there; `chatferry webhooks receive` records such changes from now on \\(changes\\.conflicts decides which side wins\\)$',
      'm',
    ),
  )

  // Skipped by a policy, yet on the platform: verify says plainly that no command removes it.
  expect(changed.stdout).toContain(
    `  unexpected users ${String(skipped)} (legacy ${String(skippedLegacy)}) — on the platform, but skipped in the ledger (a policy dropped it, so this job never sent it): something else created it; ` +
      'no chatferry command removes what this job did not load. Check who created it and whether the policy should send it; ' +
      'if it must go, delete it on the platform (DELETE /users/{uid} with permanent: true)',
  )
}, 300_000)
