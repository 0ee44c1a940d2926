/**
 * Issue 13 end to end on a generic-sql schema (an in-house schema on Postgres, the CLI as a
 * process, the sandbox over HTTP): bulk load, then the legacy database changes — a new line, an
 * edited line, a deleted line, a renamed person, a deactivated person, a room made private, a
 * member promoted, a member banned, a member added, a membership hard-deleted, the membership of the
 * deactivated person removed (sent before the deactivation, which the platform would otherwise
 * refuse), and a person given a role the app does not have (the platform refuses: the update is
 * rejected with its code and the run goes on) — and `run --delta`. The sandbox's request log must show exactly the
 * expected calls, each once, the platform's state (through the chat interface) the source's, and
 * every other row the platform holds as it was.
 * A second delta brings a removed member back and unbans the banned one.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { createPlatformClient } from '../../../src/target/client.ts'
import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { lastRequestId, ledgerKeys, receivedSince, touchedRows } from '../../helpers/delta-e2e.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { sandboxContents, writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

const SCHEMA = [
  `CREATE TABLE people (pid integer PRIMARY KEY, full_name text, handle text, rank text, joined_s bigint, left_s bigint, modified_s bigint)`,
  `CREATE TABLE rooms (rid text PRIMARY KEY, title text, visibility text, owner integer, created_s bigint, modified_s bigint)`,
  `CREATE TABLE room_people (rid text, pid integer, role text, blocked boolean, modified_s bigint, PRIMARY KEY (rid, pid))`,
  `CREATE TABLE lines (lid integer PRIMARY KEY, author integer, room text, to_pid text, body text, posted_s bigint,
     edited_s bigint, removed_s bigint, modified_s bigint)`,
]

const SOURCE = (url: string) => ({
  connector: 'generic-sql',
  url,
  pageSize: 3,
  entities: {
    users: {
      query: `SELECT pid AS id, full_name AS name, handle AS username, rank AS role, joined_s AS created_at, left_s AS deactivated_at, modified_s AS updated_at FROM people`,
      timeFormat: 'epoch-s',
    },
    groups: {
      query: `SELECT rid AS id, title AS name, visibility AS type, owner AS owner_id, created_s AS created_at, modified_s AS updated_at FROM rooms`,
      timeFormat: 'epoch-s',
    },
    members: {
      query: `SELECT rid AS group_id, pid AS user_id, role AS scope, blocked AS banned, modified_s AS updated_at FROM room_people`,
      timeFormat: 'epoch-s',
    },
    messages: {
      query: `SELECT lid AS id, author AS sender_id, CASE WHEN room IS NULL THEN 'user' ELSE 'group' END AS receiver_type,
                COALESCE(room, to_pid) AS receiver_id, body AS text, posted_s AS sent_at, edited_s AS edited_at,
                removed_s AS deleted_at, modified_s AS updated_at FROM lines`,
      timeFormat: 'epoch-s',
    },
  },
})

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let cfg: string
const T = Math.floor(Date.now() / 1000) - 86_400

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_dgs_src')
  state = await createTestDatabase('cf_dgs_state')
  const w = await openGenericWriter('postgres', source.url)
  try {
    for (const s of SCHEMA) {
      await w.exec(s)
    }
    const person = (pid: number, full_name: string) => ({
      pid,
      full_name,
      handle: `h${pid}`,
      rank: null,
      joined_s: T - 3600,
      left_s: null,
      modified_s: T,
    })
    await w.insert('people', [person(1, 'Ada'), person(2, 'Grace'), person(3, 'Linus'), person(4, 'Ken'), person(5, 'Barbara')])
    await w.insert('rooms', [
      { rid: 'r1', title: 'General', visibility: 'public', owner: 1, created_s: T - 3000, modified_s: T },
      { rid: 'r2', title: 'Ops', visibility: 'public', owner: 2, created_s: T - 3000, modified_s: T },
    ])
    const m = (rid: string, pid: number, role: string) => ({ rid, pid, role, blocked: false, modified_s: T })
    await w.insert('room_people', [
      m('r1', 1, 'admin'),
      m('r1', 2, 'participant'),
      m('r1', 3, 'participant'),
      m('r1', 4, 'participant'),
      m('r2', 2, 'admin'),
      m('r2', 5, 'participant'),
      m('r2', 1, 'participant'),
    ])
    const line = (lid: number, author: number, body: string, o: Record<string, unknown> = {}) => ({
      lid,
      author,
      room: 'r1',
      to_pid: null,
      body,
      posted_s: T + lid,
      edited_s: null,
      removed_s: null,
      modified_s: T + lid,
      ...o,
    })
    await w.insert('lines', [
      line(1, 1, 'Hello'),
      line(2, 2, 'Typo hre'),
      line(3, 4, 'Wrong room'),
      line(4, 1, 'Private', { room: null, to_pid: '2' }),
    ])
  } finally {
    await w.close()
  }
  app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: SOURCE(source.url),
    // `boss` maps to a platform role the app does not have (yet): the platform refuses it.
    policies: { retention: { oldMessages: 'send' }, roles: { map: { boss: 'boss' } } },
    load: { quotaWindowMs: 10_000 },
  })
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

it('run --delta applies each change once, rejects the one the platform refuses with its code and goes on; a later delta re-adds and unbans', async () => {
  const bulk = await runCli(['run', '--config', cfg]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(0)
  const jobId = app.id.toLowerCase()
  const before = await lastRequestId(tsb.sandbox, app.id)
  const platformBefore = await sandboxContents(tsb.sandbox, app.id)
  const now = Math.floor(Date.now() / 1000)
  const w = await openGenericWriter('postgres', source.url)
  try {
    await w.insert('lines', [
      { lid: 5, author: 2, room: 'r1', to_pid: null, body: 'New line', posted_s: T + 5, edited_s: null, removed_s: null, modified_s: now },
    ])
    await w.exec(`UPDATE lines SET body = 'Typo here', edited_s = ${now}, modified_s = ${now} WHERE lid = 2`)
    await w.exec(`UPDATE lines SET removed_s = ${now}, modified_s = ${now} WHERE lid = 3`)
    await w.exec(`UPDATE people SET full_name = 'Grace Hopper', modified_s = ${now} WHERE pid = 2`)
    await w.exec(`UPDATE people SET left_s = ${now}, modified_s = ${now} WHERE pid = 3`)
    await w.exec(`UPDATE rooms SET visibility = 'private', modified_s = ${now} WHERE rid = 'r1'`)
    await w.exec(`UPDATE room_people SET role = 'moderator', modified_s = ${now} WHERE rid = 'r2' AND pid = 5`)
    await w.exec(`UPDATE room_people SET blocked = true, modified_s = ${now} WHERE rid = 'r1' AND pid = 4`)
    await w.insert('room_people', [{ rid: 'r2', pid: 4, role: 'participant', blocked: false, modified_s: now }])
    await w.exec(`DELETE FROM room_people WHERE rid = 'r2' AND pid = 1`)
    await w.exec(`DELETE FROM room_people WHERE rid = 'r1' AND pid = 3`)
    await w.exec(`UPDATE people SET rank = 'boss', modified_s = ${now} WHERE pid = 4`)
  } finally {
    await w.close()
  }

  const delta = await runCli(['run', '--config', cfg, '--delta']).done
  // One update is refused: the run finishes with 3, everything else applied.
  expect(delta.code, delta.stderr.slice(-3000)).toBe(3)
  const users = await ledgerKeys(state.url, jobId, 'users')
  const groups = await ledgerKeys(state.url, jobId, 'groups')
  const messages = await ledgerKeys(state.url, jobId, 'messages')
  const u = (pid: number) => users.get(String(pid))?.key ?? `(no user ${pid})`
  const g = (rid: string) => groups.get(rid)?.key ?? `(no group ${rid})`
  const mk = (rid: string, pid: number) => `${g(rid)}_member_${u(pid)}`
  const msg = (lid: number) => messages.get(String(lid))
  const first = await receivedSince(tsb.sandbox, app.id, before)
  expect(first.imports).toEqual([`members ${mk('r2', 4)}`, `messages ${msg(5)?.key}`].sort())
  expect(first.writes).toEqual(
    [
      `users.update ${u(2)}`,
      `users.update ${u(4)}`,
      `users.deactivate ${u(3)}`,
      `groups.update ${g('r1')}`,
      `members.scope ${mk('r2', 5)}`,
      `members.ban ${mk('r1', 4)}`,
      `members.kick ${mk('r2', 1)}`,
      `members.kick ${mk('r1', 3)}`,
      `messages.update ${msg(2)?.platformId}`,
      `messages.delete ${msg(3)?.platformId}`,
    ].sort(),
  )

  // The refusal is listed with its legacy id, target key, kind and code.
  const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json']).done).stdout) as {
    kind?: string
    legacyId: string
    targetKey: string
    code: string
  }[]
  expect(rejects).toEqual([expect.objectContaining({ kind: 'user.update', legacyId: '4', targetKey: u(4), code: 'ERR_ROLE_NOT_FOUND' })])
  const status = await runCli(['status', '--config', cfg]).done
  expect(status.stdout).toMatch(/^user\.update\s+0\s+0\s+1\s+1\s/m)
  expect(status.stdout).toMatch(/^member\.kick\s+0\s+0\s+2\s+0\s/m)

  // Nothing else on the platform changed (u4's refused role change left its row as it was).
  expect(touchedRows(platformBefore, await sandboxContents(tsb.sandbox, app.id))).toEqual(
    [
      `users ${u(2)}`,
      `users ${u(3)}`,
      `groups ${g('r1')}`,
      `members ${mk('r2', 5)}`,
      `members ${mk('r1', 4)}`,
      `members ${mk('r2', 4)}`,
      `members ${mk('r2', 1)} (gone)`,
      `members ${mk('r1', 3)} (gone)`,
      `messages ${msg(2)?.key}`,
      `messages ${msg(3)?.key}`,
      `messages ${msg(5)?.key}`,
    ].sort(),
  )

  const client = createPlatformClient({ baseUrl: app.baseUrl, apiKey: app.apiKey })
  expect((await client.findUser(u(2)))?.name).toBe('Grace Hopper')
  expect((await client.findUser(u(3)))?.deactivatedAt).toBeDefined()
  expect((await client.getGroup(g('r1'))).type).toBe('private')
  expect(await client.findGroupMember(g('r2'), u(5))).toMatchObject({ state: 'member', member: { scope: 'moderator' } })
  expect((await client.findGroupMember(g('r1'), u(4))).state).toBe('banned')
  expect((await client.findGroupMember(g('r2'), u(1))).state).toBe('none')
  expect((await client.findGroupMember(g('r1'), u(3))).state).toBe('none')
  expect((await client.findGroupMember(g('r2'), u(4))).state).toBe('member')
  expect((await client.getMessage(msg(2)?.platformId ?? '')).data?.text).toBe('Typo here')
  expect((await client.getMessage(msg(3)?.platformId ?? '')).deletedAt).toBeDefined()

  // Later: the removed member comes back, the banned one is unbanned.
  const mid = await lastRequestId(tsb.sandbox, app.id)
  const later = Math.floor(Date.now() / 1000) + 1
  const w2 = await openGenericWriter('postgres', source.url)
  try {
    await w2.insert('room_people', [{ rid: 'r2', pid: 1, role: 'participant', blocked: false, modified_s: later }])
    await w2.exec(`UPDATE room_people SET blocked = false, modified_s = ${later} WHERE rid = 'r1' AND pid = 4`)
  } finally {
    await w2.close()
  }
  const second = await runCli(['run', '--config', cfg, '--delta']).done
  expect(second.code, second.stderr.slice(-3000)).toBe(3)
  const again = await receivedSince(tsb.sandbox, app.id, mid)
  expect(again).toEqual({
    imports: [],
    writes: [`members.add ${mk('r2', 1)}`, `members.unban ${mk('r1', 4)}`, `members.add ${mk('r1', 4)}`].sort(),
  })
  expect(await client.findGroupMember(g('r2'), u(1))).toMatchObject({ state: 'member', member: { scope: 'participant' } })
  expect(await client.findGroupMember(g('r1'), u(4))).toMatchObject({ state: 'member', member: { scope: 'participant' } })
}, 240_000)
