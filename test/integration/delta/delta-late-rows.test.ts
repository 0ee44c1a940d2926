/**
 * Issue 24 end to end on a generic-sql schema (Postgres source and ledger, the CLI as a process,
 * the sandbox over HTTP): rows that become visible after a delta read past their change time.
 *
 * Job A (messages with a change-time column, the default one-hour lookback):
 * - a line whose change time is 10 minutes below the watermark arrives with the next `run --delta`
 *   (the lookback), and the rows that delta read again unchanged cost no request;
 * - a line 3 days below the watermark is beyond the lookback: `verify` counts it as never planned
 *   and names the command that brings it in; that command (`run --delta --reconcile-keys`) loads it,
 *   and `verify` is clean after.
 * Job B (messages without a change-time column: the delta reads by `sent_at`, its watermark is the
 * bulk read's snapshot time): a line inserted later with an older `sent_at` is not read by a delta;
 * the key reconciliation of the 2nd delta (`delta.reconcileKeysEvery: 2`) loads it, and the final
 * delta (out of turn) another.
 * Then, on job A: a change time a day ahead of the source's clock leaves the watermark at the
 * snapshot: a line written after it still arrives.
 * Arrival and "nothing else sent" are read from the sandbox's request log.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, expect, it } from 'vitest'

import { VerifyReport } from '../../../src/report/schema.ts'
import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { lastRequestId, ledgerKeys, receivedSince } from '../../helpers/delta-e2e.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

const SCHEMA = [
  `CREATE TABLE people (pid integer PRIMARY KEY, full_name text, modified_s bigint)`,
  `CREATE TABLE rooms (rid text PRIMARY KEY, title text, created_s bigint, modified_s bigint)`,
  `CREATE TABLE room_people (rid text, pid integer, modified_s bigint, PRIMARY KEY (rid, pid))`,
  `CREATE TABLE lines (lid integer PRIMARY KEY, author integer, room text, body text, posted_s bigint, modified_s bigint)`,
  `CREATE TABLE memos (mid integer PRIMARY KEY, author integer, room text, body text, posted_s bigint)`,
]

/** Job A reads `lines` (with their change time); job B reads `memos` (none). */
const SOURCE = (url: string, messages: 'lines' | 'memos') => ({
  connector: 'generic-sql',
  url,
  pageSize: 2,
  entities: {
    users: { query: `SELECT pid AS id, full_name AS name, modified_s AS updated_at FROM people`, timeFormat: 'epoch-s' },
    groups: {
      query: `SELECT rid AS id, title AS name, 'public' AS type, created_s AS created_at, modified_s AS updated_at FROM rooms`,
      timeFormat: 'epoch-s',
    },
    members: { query: `SELECT rid AS group_id, pid AS user_id, modified_s AS updated_at FROM room_people`, timeFormat: 'epoch-s' },
    messages:
      messages === 'lines'
        ? {
            query: `SELECT lid AS id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text,
                      posted_s AS sent_at, modified_s AS updated_at FROM lines`,
            keys: ['id'],
            timeFormat: 'epoch-s',
          }
        : {
            query: `SELECT mid AS id, author AS sender_id, 'group' AS receiver_type, room AS receiver_id, body AS text,
                      posted_s AS sent_at FROM memos`,
            keys: ['id'],
            timeFormat: 'epoch-s',
          },
  },
})

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
/** A day ago, in epoch seconds: the history's time. */
const T = Math.floor(Date.now() / 1000) - 86_400

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_late_src')
  state = await createTestDatabase('cf_late_state')
  const w = await openGenericWriter('postgres', source.url)
  try {
    for (const s of SCHEMA) {
      await w.exec(s)
    }
    await w.insert('people', [
      { pid: 1, full_name: 'Ada', modified_s: T - 7200 },
      { pid: 2, full_name: 'Grace', modified_s: T - 7200 },
    ])
    await w.insert('rooms', [{ rid: 'r1', title: 'General', created_s: T - 9000, modified_s: T - 7200 }])
    await w.insert('room_people', [
      { rid: 'r1', pid: 1, modified_s: T - 7200 },
      { rid: 'r1', pid: 2, modified_s: T - 7200 },
    ])
    const line = (lid: number) => ({ lid, author: 1 + (lid % 2), room: 'r1', body: `Line ${lid}`, posted_s: T + lid, modified_s: T + lid })
    await w.insert('lines', [line(1), line(2), line(3), line(4)])
    const memo = (mid: number) => ({ mid, author: 1 + (mid % 2), room: 'r1', body: `Memo ${mid}`, posted_s: T + mid })
    await w.insert('memos', [memo(1), memo(2), memo(3)])
  } finally {
    await w.close()
  }
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

async function newJob(messages: 'lines' | 'memos', delta?: Record<string, unknown>): Promise<{ app: TestApp; cfg: string }> {
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: SOURCE(source.url, messages),
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
    ...(delta ? { delta } : {}),
  })
  // Every test's job shares the one ledger: each is a new job on purpose.
  const bulk = await runCli(['run', '--new-job', '--config', cfg]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(0)
  return { app, cfg }
}

async function verify(cfg: string): Promise<{ code: number | null; report: VerifyReport }> {
  const out = mkdtempSync(join(tmpdir(), 'cf-late-verify-'))
  const r = await runCli(['verify', '--config', cfg, '--out', out, '--sample', '1000'], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { code: r.code, report: VerifyReport.parse(JSON.parse(readFileSync(join(out, 'verify-report.json'), 'utf8'))) }
}

/** The message imports and chat writes a command caused, from the sandbox's request log. */
async function sentBy(app: TestApp, args: readonly string[]): Promise<{ imports: string[]; writes: string[]; output: string }> {
  const before = await lastRequestId(tsb.sandbox, app.id)
  const r = await runCli([...args]).done
  expect(r.code, r.stderr.slice(-3000)).toBe(0)
  return { ...(await receivedSince(tsb.sandbox, app.id, before)), output: r.stdout + r.stderr }
}

it('a line changed below the watermark arrives with the next delta (the lookback), rows read again unchanged cost nothing; one beyond it with the command verify advises; a change time ahead of the clock does not hold back later rows', async () => {
  const { app, cfg } = await newJob('lines')
  const jobId = app.id.toLowerCase()
  const w = await openGenericWriter('postgres', source.url)
  try {
    // The watermark is line 4's change time (T + 4): a long transaction commits line 5 now, changed 10 minutes before it.
    await w.insert('lines', [{ lid: 5, author: 1, room: 'r1', body: 'Committed late', posted_s: T - 600, modified_s: T + 4 - 600 }])
  } finally {
    await w.close()
  }
  const first = await sentBy(app, ['run', '--config', cfg, '--delta'])
  const messages = await ledgerKeys(state.url, jobId, 'messages')
  expect(first.imports).toEqual([`messages ${messages.get('5')?.key}`])
  expect(first.writes).toEqual([])
  // The lookback read lines 1–4 again (and every user, group and member): unchanged, none sent.
  expect(first.output).toMatch(/messages\s+5 rows → 1 new, 0 updated, 4 unchanged/)
  expect(first.output).toMatch(/users\s+2 rows → 0 new, 0 updated, 2 unchanged/)

  // An offline client syncs a line changed 3 days ago: beyond the lookback, a delta does not read it.
  const w2 = await openGenericWriter('postgres', source.url)
  try {
    await w2.insert('lines', [{ lid: 6, author: 2, room: 'r1', body: 'Synced offline', posted_s: T - 3 * 86_400, modified_s: T - 3 * 86_400 }])
  } finally {
    await w2.close()
  }
  const missed = await sentBy(app, ['run', '--config', cfg, '--delta'])
  expect(missed.imports).toEqual([])
  const { code, report } = await verify(cfg)
  expect(code).not.toBe(0)
  // The only mismatch is the line the delta missed: everything the deltas before it loaded checks out.
  const counted = report.mismatches
  expect(counted.map((m) => ({ kind: m.kind, entity: m.entity, expected: m.expected, actual: m.actual }))).toEqual([
    { kind: 'source-count', entity: 'messages', expected: 6, actual: 5 },
  ])
  const advised = /run `chatferry ([^`]+)`/.exec(counted[0]?.note ?? '')?.[1]
  expect(advised).toBe('run --delta --reconcile-keys')

  // The advised command brings it in, and only it.
  const reconciled = await sentBy(app, [...(advised ?? '').split(' '), '--config', cfg])
  const after = await ledgerKeys(state.url, jobId, 'messages')
  expect(reconciled.imports).toEqual([`messages ${after.get('6')?.key}`])
  expect(reconciled.writes).toEqual([])
  expect(reconciled.output).toMatch(/keys reconciled: 1 row the ledger never planned/)
  const clean = await verify(cfg)
  expect(clean.report.mismatches).toEqual([])
  expect(clean.code).toBe(0)

  // A change time ahead of the source clock does not carry the watermark past the snapshot: later rows still arrive.
  const now = Math.floor(Date.now() / 1000)
  const w3 = await openGenericWriter('postgres', source.url)
  try {
    // A client whose clock is a day ahead.
    await w3.insert('lines', [{ lid: 7, author: 1, room: 'r1', body: 'From the future', posted_s: now, modified_s: now + 86_400 }])
  } finally {
    await w3.close()
  }
  const ahead = await sentBy(app, ['run', '--config', cfg, '--delta'])
  expect(ahead.imports).toEqual([`messages ${(await ledgerKeys(state.url, jobId, 'messages')).get('7')?.key}`])
  const w4 = await openGenericWriter('postgres', source.url)
  try {
    await w4.insert('lines', [{ lid: 8, author: 2, room: 'r1', body: 'Written after', posted_s: now + 1, modified_s: now + 1 }])
  } finally {
    await w4.close()
  }
  // Line 7 is read again (its time is still ahead) and costs nothing; line 8 arrives.
  const next = await sentBy(app, ['run', '--config', cfg, '--delta'])
  expect(next.imports).toEqual([`messages ${(await ledgerKeys(state.url, jobId, 'messages')).get('8')?.key}`])
  expect(next.writes).toEqual([])
}, 240_000)

it('without a change-time column, a line inserted later with an older sent_at is loaded by the scheduled key reconciliation', async () => {
  const { app, cfg } = await newJob('memos', { reconcileKeysEvery: 2 })
  const jobId = app.id.toLowerCase()
  const w = await openGenericWriter('postgres', source.url)
  try {
    await w.insert('memos', [{ mid: 4, author: 2, room: 'r1', body: 'Written offline two days ago', posted_s: T - 2 * 86_400 }])
  } finally {
    await w.close()
  }
  // The 1st delta reads by sent_at from the bulk read's snapshot time (less the lookback): not this row.
  const first = await sentBy(app, ['run', '--config', cfg, '--delta'])
  expect(first.imports).toEqual([])
  expect(first.output).not.toMatch(/keys reconciled/)
  // The 2nd delta reconciles the keys: the row arrives, nothing else is sent.
  const second = await sentBy(app, ['run', '--config', cfg, '--delta'])
  const messages = await ledgerKeys(state.url, jobId, 'messages')
  expect(second.imports).toEqual([`messages ${messages.get('4')?.key}`])
  expect(second.writes).toEqual([])
  expect(second.output).toMatch(/messages .*\n\s+keys reconciled: 1 row the ledger never planned/)
  // The count restarts: the 3rd delta does not reconcile, the 4th does (and finds nothing).
  expect((await sentBy(app, ['run', '--config', cfg, '--delta'])).output).not.toMatch(/keys reconciled/)
  const fourth = await sentBy(app, ['run', '--config', cfg, '--delta'])
  expect(fourth.output).toMatch(/keys reconciled: 0 rows/)
  expect(fourth.imports).toEqual([])
  // The final delta always reconciles, whatever the count says.
  const w2 = await openGenericWriter('postgres', source.url)
  try {
    await w2.insert('memos', [{ mid: 5, author: 1, room: 'r1', body: 'Written offline a day ago', posted_s: T - 86_400 }])
  } finally {
    await w2.close()
  }
  const final = await sentBy(app, ['run', '--config', cfg, '--delta', '--final'])
  expect(final.imports).toEqual([`messages ${(await ledgerKeys(state.url, jobId, 'messages')).get('5')?.key}`])
  const clean = await verify(cfg)
  expect(clean.report.mismatches).toEqual([])
  expect(clean.code).toBe(0)
}, 240_000)

it('refuses --reconcile-keys without --delta, and a bad delta: section before any I/O, every problem listed', async () => {
  // Nothing listens on the target's or the ledger's address: a command that touched either would fail otherwise.
  const cfg = writeRunConfig({
    appId: 'late-rows',
    apiKey: 'k'.repeat(40),
    baseUrl: 'http://127.0.0.1:9/apps/late-rows/v3',
    stateUrl: 'postgres://nobody@127.0.0.1:9/none',
    source: SOURCE('postgres://nobody@127.0.0.1:9/none', 'lines'),
    delta: { lookbackSeconds: { messages: -5, posts: 60 }, reconcileKeysEvery: 'often' },
  })
  const check = await runCli(['config', 'check', '--config', cfg]).done
  expect(check.code).toBe(2)
  for (const path of ['delta.lookbackSeconds.messages', 'delta.lookbackSeconds', 'delta.reconcileKeysEvery']) {
    expect(check.stdout + check.stderr).toContain(path)
  }
  const usage = await runCli(['run', '--config', cfg, '--reconcile-keys']).done
  expect(usage.code).toBe(2)
  expect(usage.stderr).toContain('--reconcile-keys needs --delta')
}, 60_000)
