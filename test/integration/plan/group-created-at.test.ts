/**
 * A generic-sql schema whose rooms have no creation time (issue 12, item 5): the platform would
 * stamp each group with its import time and refuse every earlier member `joinedAt`
 * (`ERR_IMPORT_INVALID_JOINEDAT`). `plan` reports each group given a creation time and how; `run`
 * loads every membership with its own `joinedAt` and every message; a later plan and a delta keep
 * the time the ledger holds even when the source would now derive another.
 * On Postgres, SQLite and MariaDB (skipped, with the reason, without a MariaDB server).
 * Nothing rejected is read from each run's `--json` summary (the counts `rejects` lists from).
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import type { CommandSummary } from '../../../src/cli/command-summary.ts'
import { PlanReport } from '../../../src/report/schema.ts'
import { type GenericEngine, openGenericWriter, sqlTime } from '../../fixtures/generic-sql/fixture.ts'
import { oneJsonObject } from '../../helpers/cli-suite.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { createSource, type Source } from '../../helpers/key-source.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { sandboxContents, writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

const HOUR = 3_600_000
const DAY = 24 * HOUR
// Ten days ago, half a second past a whole second (the import keeps whole seconds).
const BASE = Math.floor(Date.now() / 1000) * 1000 - 10 * DAY + 500
const s = (ms: number): number => Math.floor(ms / 1000)

const TS: Record<GenericEngine, string> = { postgres: 'timestamp(3)', mysql: 'datetime(3)', sqlite: 'TEXT' }

const STAFF = [
  { sid: 1, nick: 'Ann' },
  { sid: 2, nick: 'Bob' },
  { sid: 3, nick: 'Cy' },
]
// No creation time anywhere. Room "2" shares its id with user 2, who receives the earliest
// message of the source as a direct message: it must not count for the room.
const CHAN = [
  { cid: 'c1', label: 'General' },
  { cid: 'c2', label: 'Random' },
  { cid: 'c3', label: 'Quiet' },
  { cid: 'c4', label: 'Lurkers' },
  { cid: '2', label: 'Empty' },
]
const CHAN_STAFF: { cid: string; sid: number; since: number | null }[] = [
  { cid: 'c1', sid: 1, since: BASE + 2 * HOUR },
  { cid: 'c1', sid: 2, since: BASE + 3 * HOUR },
  { cid: 'c2', sid: 1, since: BASE + 1 * HOUR },
  { cid: 'c2', sid: 3, since: BASE + 5 * HOUR },
  { cid: 'c3', sid: 2, since: null },
  { cid: 'c4', sid: 3, since: BASE + 4 * DAY },
]
const POST: { pid: number; sid: number; cid: string | null; to_sid: string | null; body: string; at: number }[] = [
  { pid: 10, sid: 1, cid: 'c1', to_sid: null, body: 'first words in General', at: BASE + 90 * 60_000 },
  { pid: 11, sid: 2, cid: 'c1', to_sid: null, body: 'hello', at: BASE + 4 * HOUR },
  { pid: 12, sid: 3, cid: 'c2', to_sid: null, body: 'random thought', at: BASE + 6 * HOUR },
  { pid: 13, sid: 1, cid: 'c3', to_sid: null, body: 'anyone here?', at: BASE + 2 * DAY },
  { pid: 14, sid: 1, cid: null, to_sid: '2', body: 'a direct message before everything', at: BASE - 5 * DAY },
]

/** What the planner must choose per room, and by which rule (CREATED_AT: the times alone). */
const EXPECTED: Record<string, { createdAt: number; rule: string }> = {
  c1: { createdAt: s(BASE + 90 * 60_000) - 1, rule: 'before-first-message' },
  c2: { createdAt: s(BASE + HOUR) - 1, rule: 'before-first-join' },
  c3: { createdAt: s(BASE + 2 * DAY) - 1, rule: 'before-first-message' },
  c4: { createdAt: s(BASE + 4 * DAY) - 1, rule: 'before-first-join' },
  // Neither members with a time nor messages: one second before the earliest of the source
  // (c2's first join; the direct message does not count).
  '2': { createdAt: s(BASE + HOUR) - 1, rule: 'before-source-earliest' },
}

const CREATED_AT = Object.fromEntries(Object.entries(EXPECTED).map(([id, e]) => [id, e.createdAt]))

function schema(engine: GenericEngine): string[] {
  const ts = TS[engine]
  return [
    `CREATE TABLE staff (sid integer PRIMARY KEY, nick varchar(100))`,
    `CREATE TABLE chan (cid varchar(20) PRIMARY KEY, label varchar(100))`,
    `CREATE TABLE chan_staff (cid varchar(20) NOT NULL, sid integer NOT NULL, since ${ts}, PRIMARY KEY (cid, sid))`,
    `CREATE TABLE post (pid integer PRIMARY KEY, sid integer, cid varchar(20), to_sid varchar(20), body text, at ${ts} NOT NULL)`,
  ]
}

function sourceConfig(url: string): Record<string, unknown> {
  return {
    connector: 'generic-sql',
    url,
    pageSize: 2,
    entities: {
      users: { query: 'SELECT sid AS id, nick AS name FROM staff' },
      groups: { query: 'SELECT cid AS id, label AS name FROM chan' },
      members: { query: 'SELECT cid AS group_id, sid AS user_id, since AS joined_at FROM chan_staff' },
      messages: {
        query: `SELECT pid AS id, sid AS sender_id, CASE WHEN cid IS NULL THEN 'user' ELSE 'group' END AS receiver_type,
                  COALESCE(cid, to_sid) AS receiver_id, body AS text, at AS sent_at FROM post`,
      },
    },
  }
}

const ENGINES: readonly GenericEngine[] = ['postgres', 'sqlite', 'mysql']

let tsb: TestSandbox

beforeAll(async () => {
  tsb = await startTestSandbox()
})

afterAll(async () => {
  await tsb?.close()
})

for (const engine of ENGINES) {
  const skip = engine === 'mysql' && inject('mysqlUrl') === undefined
  describe.skipIf(skip)(`groups without a creation time × generic-sql on ${engine === 'mysql' ? 'MariaDB' : engine}`, () => {
    let source: Source
    // SQLite runs on the embedded ledger (one connection: the dry run must read through its own).
    let state: TestDatabase | undefined
    let cfg: string
    let appId: string

    beforeAll(async () => {
      source = await createSource(engine)
      state = engine === 'sqlite' ? undefined : await createTestDatabase('cf_created_state')
      const w = await openGenericWriter(engine, source.url)
      try {
        for (const stmt of schema(engine)) {
          await w.exec(stmt)
        }
        await w.insert('staff', STAFF)
        await w.insert('chan', CHAN)
        await w.insert(
          'chan_staff',
          CHAN_STAFF.map((m) => ({ ...m, since: m.since === null ? null : sqlTime(m.since) })),
        )
        await w.insert(
          'post',
          POST.map((p) => ({ ...p, at: sqlTime(p.at) })),
        )
      } finally {
        await w.close()
      }
      const app = await tsb.app({ requestsPerMinute: 6000, windowMs: 10_000 })
      appId = app.id
      cfg = writeRunConfig({
        appId: app.id,
        apiKey: app.apiKey,
        baseUrl: app.baseUrl,
        ...(state ? { stateUrl: state.url } : {}),
        source: sourceConfig(source.url),
        load: { quotaWindowMs: 10_000 },
      })
    })

    afterAll(async () => {
      await source?.drop()
      await state?.drop()
    })

    async function plan(): Promise<PlanReport> {
      const out = mkdtempSync(join(tmpdir(), 'chatferry-created-plan-'))
      const r = await runCli(['plan', '--config', cfg, '--out', out], { CHATFERRY_LOG_LEVEL: 'error' }).done
      const file = join(out, 'plan-report.json')
      if (!existsSync(file)) {
        throw new Error(`no report (exit ${r.code}): ${r.stderr.slice(-2000)}`)
      }
      expect(r.stdout).toContain(`groups given a creation time ${CHAN.length}`)
      const html = readFileSync(join(out, 'plan-report.html'), 'utf8')
      expect(html).toContain('groups without a creation time, given one')
      return PlanReport.parse(JSON.parse(readFileSync(file, 'utf8')))
    }

    /** Runs `run` with `args` and `--json`: exit 0, and no item or update rejected (nor accepted) in its summary. */
    async function runClean(...args: string[]): Promise<void> {
      const res = await runCli(['run', '--config', cfg, ...args, '--json']).done
      expect(res.code, res.stderr.slice(-3000)).toBe(0)
      const summary = oneJsonObject(res.stdout) as unknown as CommandSummary
      expect(Object.keys(summary.entities).sort()).toEqual(['groups', 'members', 'messages', 'users'])
      for (const [entity, e] of Object.entries(summary.entities)) {
        expect({ entity, rejected: e.rejected, accepted: e.accepted, remaining: e.remaining }).toEqual({
          entity,
          rejected: 0,
          accepted: 0,
          remaining: 0,
        })
      }
      for (const [kind, u] of Object.entries(summary.updates ?? {})) {
        expect({ kind, rejected: u.rejected }).toEqual({ kind, rejected: 0 })
      }
    }

    /** The groups' createdAt in the ledger's items (a Postgres ledger; the embedded one is checked through plan). */
    async function ledgerGroups(db: TestDatabase): Promise<Record<string, number | undefined>> {
      const c = new pg.Client({ connectionString: db.url })
      await c.connect()
      try {
        const r = await c.query<{ legacy_id: string; payload: string }>(
          `select legacy_id, payload::text as payload from chatferry.items where entity = 'groups'`,
        )
        return Object.fromEntries(r.rows.map((row) => [row.legacy_id, (JSON.parse(row.payload) as { createdAt?: number }).createdAt]))
      } finally {
        await c.end()
      }
    }

    it('plan reports each group given a creation time, by rule', async () => {
      const report = await plan()
      expect(report.derivedCreatedAt.groups.count).toBe(CHAN.length)
      expect(report.derivedCreatedAt.byRule).toEqual({ 'before-first-message': 2, 'before-first-join': 2, 'before-source-earliest': 1 })
      expect(report.entities.groups.toCreate).toBe(CHAN.length)
      expect(report.joinedAt.clamped.count).toBe(0)
    })

    it('run loads every membership with its own joinedAt and every message', async () => {
      await runClean()

      const got = await sandboxContents(tsb.sandbox, appId)
      expect(Object.fromEntries(got.groups.map((g) => [g.key, Number(g.row.created_at)]))).toEqual(CREATED_AT)
      const joined = Object.fromEntries(got.members.map((m) => [m.key, Number(m.row.joined_at)]))
      expect(Object.keys(joined).sort()).toEqual(CHAN_STAFF.map((m) => `${m.cid}_member_${m.sid}`).sort())
      for (const m of CHAN_STAFF) {
        if (m.since !== null) {
          expect(joined[`${m.cid}_member_${m.sid}`], `${m.cid}/${m.sid}`).toBe(s(m.since))
        }
      }
      expect(got.messages.map((m) => m.key).sort()).toEqual(POST.map((p) => String(p.pid)).sort())
      if (state !== undefined) {
        expect(await ledgerGroups(state)).toEqual(CREATED_AT)
      }
    })

    it('a later plan and a delta keep the creation time the ledger holds', async () => {
      // c1's first message goes: derived afresh, c1 would now be created before its first join.
      const w = await openGenericWriter(engine, source.url)
      try {
        await w.exec('DELETE FROM post WHERE pid = 10')
        await w.insert('post', [{ pid: 15, sid: 2, cid: 'c1', to_sid: null, body: 'later', at: sqlTime(Date.now() - 60_000) }])
      } finally {
        await w.close()
      }
      const report = await plan()
      expect(report.derivedCreatedAt.byRule).toEqual({ 'kept-from-ledger': CHAN.length })
      expect(report.entities.groups.fates.loadedUnchanged).toBe(CHAN.length)

      await runClean('--delta')
      if (state !== undefined) {
        // A Postgres ledger is read directly: every group still holds the time first derived.
        expect(await ledgerGroups(state)).toEqual(CREATED_AT)
      } else {
        // The embedded ledger is read through a plan: every time kept, every group unchanged.
        const after = await plan()
        expect(after.derivedCreatedAt.byRule).toEqual({ 'kept-from-ledger': CHAN.length })
        expect(after.entities.groups.fates.loadedUnchanged).toBe(CHAN.length)
      }
    })
  })
}
