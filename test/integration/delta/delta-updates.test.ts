/**
 * A delta run after a full run records exactly the update intents the source's changes ask for
 * (issue 13), on a generic-sql SQLite source, with the ledger on Postgres and embedded: renamed,
 * deactivated and hard-deleted users; a group made private (under `changes.groups: report`); a
 * member promoted, banned, removed and re-added; a message edited, soft-deleted, moved in time,
 * hard-deleted (found only with `--detect-deletes`). The dry run (`plan`) reports the same intents
 * and writes nothing. Intents are read from the ledger, not from counts the run prints.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DatabaseSync } from 'node:sqlite'

import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PlanReport } from '../../../src/report/schema.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let tsb: TestSandbox
let pgLedger: TestDatabase

beforeAll(async () => {
  // The sandbox on Postgres: its store is not the subject, and an in-process PGlite serving every request costs CPU.
  tsb = await startTestSandbox()
  pgLedger = await createTestDatabase('cf_delta_upd')
})

afterAll(async () => {
  await tsb?.close()
  await pgLedger?.drop()
})

const SCHEMA = [
  `CREATE TABLE users (id TEXT PRIMARY KEY, name TEXT, avatar TEXT, deactivated_at INTEGER, updated_at INTEGER)`,
  `CREATE TABLE groups (id TEXT PRIMARY KEY, name TEXT, type TEXT, updated_at INTEGER)`,
  `CREATE TABLE members (group_id TEXT, user_id TEXT, scope TEXT, banned INTEGER, updated_at INTEGER, PRIMARY KEY (group_id, user_id))`,
  `CREATE TABLE messages (id TEXT PRIMARY KEY, sender_id TEXT, receiver_type TEXT, receiver_id TEXT, text TEXT,
     sent_at INTEGER, deleted_at INTEGER, updated_at INTEGER)`,
]

function seed(db: DatabaseSync, t0: number): void {
  for (const s of SCHEMA) {
    db.exec(s)
  }
  const users = [
    ['u1', 'Ann'],
    ['u2', 'Bob'],
    ['u3', 'Cid'],
    ['u4', 'Dee'],
  ]
  for (const [id, name] of users) {
    db.prepare('INSERT INTO users VALUES (?, ?, ?, NULL, ?)').run(id as string, name as string, 'https://example.com/a.png', t0)
  }
  db.prepare("INSERT INTO groups VALUES ('g1', 'General', 'public', ?), ('g2', 'Random', 'public', ?)").run(t0, t0)
  for (const [g, u] of [
    ['g1', 'u1'],
    ['g1', 'u2'],
    ['g1', 'u3'],
    ['g2', 'u1'],
    ['g2', 'u4'],
  ]) {
    db.prepare("INSERT INTO members VALUES (?, ?, 'participant', 0, ?)").run(g as string, u as string, t0)
  }
  for (let i = 1; i <= 5; i++) {
    db.prepare("INSERT INTO messages VALUES (?, ?, 'group', 'g1', ?, ?, NULL, ?)").run(`m${i}`, i % 2 ? 'u1' : 'u2', `hello ${i}`, t0 + i * 1000, t0)
  }
  db.prepare("INSERT INTO messages VALUES ('m6', 'u1', 'user', 'u2', 'hi Bob', ?, NULL, ?)").run(t0 + 6000, t0)
}

/** The changes of the scenario, each stamped `now` so a delta reads them. */
function change(db: DatabaseSync, now: number): void {
  db.prepare("UPDATE users SET name = 'Ann Smith', updated_at = ? WHERE id = 'u1'").run(now)
  db.prepare("UPDATE users SET deactivated_at = ?, updated_at = ? WHERE id = 'u2'").run(now, now)
  db.exec("DELETE FROM users WHERE id = 'u4'")
  db.exec("DELETE FROM members WHERE user_id = 'u4'")
  db.prepare("UPDATE groups SET type = 'private', updated_at = ? WHERE id = 'g1'").run(now)
  db.prepare("UPDATE members SET scope = 'moderator', updated_at = ? WHERE group_id = 'g1' AND user_id = 'u2'").run(now)
  db.prepare("UPDATE members SET banned = 1, updated_at = ? WHERE group_id = 'g1' AND user_id = 'u3'").run(now)
  db.exec("DELETE FROM members WHERE group_id = 'g2' AND user_id = 'u1'")
  db.prepare("UPDATE messages SET text = 'hello 1 (edited)', updated_at = ? WHERE id = 'm1'").run(now)
  db.prepare('UPDATE messages SET deleted_at = ?, updated_at = ? WHERE id = ?').run(now, now, 'm2')
  db.prepare('UPDATE messages SET sent_at = sent_at + 60000, updated_at = ? WHERE id = ?').run(now, 'm3')
  db.exec("DELETE FROM messages WHERE id = 'm5'")
  db.prepare("INSERT INTO messages VALUES ('m7', 'u1', 'group', 'g1', 'new after the load', ?, NULL, ?)").run(now - 1000, now)
}

/** `entity kind legacyId policy state` of every intent, with apply intents as `applied` whatever the lane made of them. */
const EXPECTED_DELTA = [
  'groups group.update g1 report reported',
  'members member.ban g1/u3 apply applied',
  'members member.kick g2/u1 apply applied',
  'members member.kick g2/u4 apply applied',
  'members member.scope g1/u2 apply applied',
  'messages message.delete m2 apply applied',
  'messages message.edit m1 apply applied',
  'messages message.unchangeable m3 report reported',
  'users user.deactivate u2 apply applied',
  'users user.deactivate u4 apply applied',
  'users user.update u1 apply applied',
]

const TIME = { timeFormat: 'epoch-ms' }

describe.each(['postgres', 'embedded'] as const)('delta after a full run, ledger %s', (ledger) => {
  const dir = mkdtempSync(join(tmpdir(), `chatferry-delta-upd-${ledger}-`))
  const dbPath = join(dir, 'legacy.db')
  let cfg: string
  let stateUrl: string | undefined

  const intents = async () => {
    const store = await openLedger(stateUrl !== undefined ? { url: stateUrl } : { dir: join(dir, '.chatferry') })
    try {
      const r = await sql<{ entity: string; kind: string; legacy_id: string; policy: string; status: string; reason: string | null }>`
        select entity, kind, legacy_id, policy, status, reason from chatferry.updates order by id`.execute(inspectLedger(store))
      const items = await sql<{ n: number; h: string }>`
        select count(*)::int as n, coalesce(string_agg(target_key || ':' || status || ':' || coalesce(payload_hash, ''), ',' order by id), '') as h
        from chatferry.items`.execute(inspectLedger(store))
      return { rows: r.rows, items: items.rows[0] }
    } finally {
      await store.close()
    }
  }
  const state = (s: string) => (s === 'reported' || s === 'ignored' ? s : ['planned', 'sent', 'done'].includes(s) ? 'applied' : s)
  const lines = (rows: { entity: string; kind: string; legacy_id: string; policy: string; status: string }[]) =>
    rows.map((r) => `${r.entity} ${r.kind} ${r.legacy_id} ${r.policy} ${state(r.status)}`).sort()

  beforeAll(async () => {
    if (ledger === 'postgres') {
      stateUrl = pgLedger.url
    }
    const db = new DatabaseSync(dbPath)
    seed(db, Date.now() - 3_600_000)
    db.close()
    const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
    cfg = writeRunConfig({
      dir,
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      ...(stateUrl !== undefined ? { stateUrl } : {}),
      source: {
        connector: 'generic-sql',
        url: `sqlite:${dbPath}`,
        entities: {
          users: { query: 'SELECT * FROM users', ...TIME },
          groups: { query: 'SELECT * FROM groups', ...TIME },
          members: { query: 'SELECT * FROM members', ...TIME },
          messages: { query: 'SELECT * FROM messages', ...TIME },
        },
      },
      changes: { groups: 'report' },
      load: { quotaWindowMs: 10_000 },
    })
    const full = await runCli(['run', '--config', cfg]).done
    expect(full.code, full.stderr.slice(-3000)).toBe(0)
    const w = new DatabaseSync(dbPath)
    change(w, Date.now())
    w.close()
  })

  it('the dry run reports the intents a delta would record, per entity by kind and policy, and writes nothing', async () => {
    const before = await intents()
    const out = mkdtempSync(join(tmpdir(), 'chatferry-delta-plan-'))
    const res = await runCli(['plan', '--config', cfg, '--out', out], { CHATFERRY_LOG_LEVEL: 'error' }).done
    expect(res.code, res.stderr.slice(-3000)).toBe(0)
    const report = PlanReport.parse(JSON.parse(readFileSync(join(out, 'plan-report.json'), 'utf8')))
    const found = Object.entries(report.entities).flatMap(([entity, x]) =>
      Object.entries(x.updates).flatMap(([kind, byPolicy]) =>
        Object.entries(byPolicy).flatMap(([policy, c]) => c.samples.map((s) => `${entity} ${kind} ${s.legacyId} ${policy}`)),
      ),
    )
    expect(found.sort()).toEqual(EXPECTED_DELTA.map((l) => l.split(' ').slice(0, 4).join(' ')).sort())
    expect(report.entities.users.vanished).toBe(1)
    expect(report.entities.members.vanished).toBe(2)
    expect(report.entities.messages.vanished).toBeNull()
    expect(report.entities.users.updates['user.update']?.apply?.samples[0]).toMatchObject({
      legacyId: 'u1',
      targetKey: 'u1',
      reason: 'changed: name',
    })
    expect(res.stdout).toMatch(/updates of loaded users: .*user\.update \(apply/)
    expect(await intents()).toEqual(before)
    expect(before.rows).toEqual([])
  })

  it('run --delta records exactly the expected intents; --detect-deletes adds the hard-deleted message; a re-added member is added again', async () => {
    const delta = await runCli(['run', '--config', cfg, '--delta']).done
    expect(delta.code, delta.stderr.slice(-3000)).toBe(0)
    expect(delta.stdout).toMatch(
      /^ +updates of loaded items: 1 user\.update, 2 user\.deactivate \(1 gone from the source\); recorded: 3 planned, 0 reported/m,
    )
    const first = await intents()
    expect(lines(first.rows)).toEqual(EXPECTED_DELTA)
    expect(first.rows.find((r) => r.kind === 'message.unchangeable')?.reason).toMatch(/sentAt \(a message keeps its sent time\)/)

    const status = JSON.parse((await runCli(['status', '--config', cfg, '--json']).done).stdout) as {
      updates: { entities: Record<string, Record<string, number>> }
    }
    expect(status.updates.entities.groups?.reported).toBe(1)
    expect(status.updates.entities.users).toMatchObject({ reported: 0, superseded: 0 })

    // The member comes back; the next delta also compares the messages' keys.
    const w = new DatabaseSync(dbPath)
    w.prepare("INSERT INTO members VALUES ('g2', 'u1', 'participant', 0, ?)").run(Date.now())
    w.close()
    const second = await runCli(['run', '--config', cfg, '--delta', '--detect-deletes']).done
    expect(second.code, second.stderr.slice(-3000)).toBe(0)
    const after = await intents()
    // Nothing recorded twice: the rows at the watermark's instant are read again, unchanged or reported already.
    expect(lines(after.rows)).toEqual(
      [...EXPECTED_DELTA, 'members member.add g2/u1 apply applied', 'messages message.delete m5 report reported'].sort(),
    )
  })

  it('--detect-deletes needs --delta', async () => {
    const res = await runCli(['run', '--config', cfg, '--detect-deletes']).done
    expect(res.code).toBe(2)
    expect(res.stderr).toMatch(/--detect-deletes needs --delta/)
  })
})
