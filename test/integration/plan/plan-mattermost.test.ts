/**
 * `chatferry plan` on the Mattermost fixture (Postgres), run as a process:
 * - every count of the JSON report equals what the fixture's rows and the policies predict (the
 *   prediction is made here from `expectedMattermost(seed)` with the policies' rules, never from
 *   chatferry's output);
 * - planning twice with rows added in between: the diff names exactly those rows;
 * - `--fail-on` gates set the exit code.
 */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import type { LegacyGroup, LegacyMember, LegacyMessage, LegacyUser } from '../../../src/model/records.ts'
import { PlanReport } from '../../../src/report/schema.ts'
import type { ExpectedRow } from '../../fixtures/expected-row.ts'
import { expectedMattermost } from '../../fixtures/mattermost/expected.ts'
import { loadMattermostFixture, type MattermostSeed, MM, openFixtureWriter } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'

const DAY = 86_400_000
const POLICIES = { retention: { oldMessages: 'send' } } as const
const QUOTA = { requestsPerMinute: 60, itemsPerRequest: 50 }

let source: TestDatabase
let state: TestDatabase
let seed: MattermostSeed
let dir: string
let cfg: string

function writeConfig(stateUrl: string, sourceUrl: string, into: string): string {
  const file = join(into, 'chatferry.yaml')
  writeFileSync(
    file,
    stringify({
      target: {
        appId: 'plan-test',
        region: 'us',
        apiKey: 'not-a-real-key-0123456789',
        baseUrl: 'http://127.0.0.1:9/apps/plan-test/v3',
        quota: QUOTA,
      },
      state: { url: stateUrl },
      source: { connector: 'mattermost', url: sourceUrl, pageSize: 4 },
      policies: POLICIES,
    }),
  )
  return file
}

beforeAll(async () => {
  source = await createTestDatabase('cf_plan_src')
  state = await createTestDatabase('cf_plan_state')
  seed = await loadMattermostFixture('postgres', source.url)
  dir = mkdtempSync(join(tmpdir(), 'chatferry-plan-'))
  cfg = writeConfig(state.url, source.url, dir)
})

afterAll(async () => {
  await source?.drop()
  await state?.drop()
})

interface Prediction {
  sourceRows: number
  toCreate: number
  skipped: number
  rejected: number
}

/** What the default policies (plus `retention.oldMessages: send`) do with the fixture's rows. */
function predict(s: MattermostSeed, now: number) {
  const rows = expectedMattermost(s)
  const okUsers = new Map<string, LegacyUser>()
  for (const r of rows.users) {
    if (r.ok) {
      okUsers.set(r.record.id, r.record)
    }
  }
  const okGroups = new Map<string, LegacyGroup>()
  for (const r of rows.groups) {
    if (r.ok) {
      okGroups.set(r.record.id, r.record)
    }
  }
  const count = <T>(list: ExpectedRow<never>[] | readonly T[], f: (x: T) => boolean) => (list as T[]).filter(f).length
  const bad = <E extends 'users' | 'groups' | 'members' | 'messages'>(list: ExpectedRow<E>[]) => list.filter((r) => !r.ok).length

  const users: Prediction = { sourceRows: rows.users.length, toCreate: okUsers.size, skipped: 0, rejected: bad(rows.users) }
  const groups: Prediction = { sourceRows: rows.groups.length, toCreate: okGroups.size, skipped: 0, rejected: bad(rows.groups) }
  const okMembers = rows.members.filter((r) => r.ok).map((r) => (r as { record: LegacyMember }).record)
  const memberRefOk = (m: LegacyMember) => okGroups.has(m.groupId) && okUsers.has(m.userId)
  const members: Prediction = {
    sourceRows: rows.members.length,
    toCreate: count(okMembers, memberRefOk),
    skipped: 0,
    rejected: bad(rows.members) + count(okMembers, (m) => !memberRefOk(m)),
  }
  const okMessages = rows.messages.filter((r) => r.ok).map((r) => (r as { record: LegacyMessage }).record)
  // Policies in the order the mapping applies them: deletes (skip), systemMessages (skip), emptyMessages (skip).
  const skippedMessage = (m: LegacyMessage) =>
    m.deletedAt !== undefined || m.systemKind !== undefined || (m.type === 'text' && (m.text ?? '').trim() === '' && !m.attachments?.length)
  const unknownReceiver = (m: LegacyMessage) => m.receiverType === 'group' && !okGroups.has(m.receiverId)
  const live = okMessages.filter((m) => !skippedMessage(m))
  const placeholders = new Set(
    live.flatMap((m) => [m.senderId, ...(m.receiverType === 'user' ? [m.receiverId] : [])]).filter((id) => !okUsers.has(id)),
  )
  users.toCreate += placeholders.size
  const messages: Prediction = {
    sourceRows: rows.messages.length,
    toCreate: count(live, (m) => !unknownReceiver(m)),
    skipped: count(okMessages, skippedMessage),
    rejected: bad(rows.messages) + count(live, unknownReceiver),
  }
  const windowStart = now - 183 * DAY
  const months: Record<string, number> = {}
  for (const m of okMessages) {
    const d = new Date(m.sentAt)
    const key = `${d.getUTCFullYear()}-${String(d.getUTCMonth() + 1).padStart(2, '0')}`
    months[key] = (months[key] ?? 0) + 1
  }
  return {
    entities: { users, groups, members, messages },
    placeholders: placeholders.size,
    replies: count(live, (m) => m.threadParentId !== undefined && !unknownReceiver(m)),
    beyondRetention: count(okMessages, (m) => m.sentAt < windowStart),
    months,
  }
}

async function plan(args: string[] = []): Promise<{ code: number | null; stdout: string; stderr: string; report: PlanReport; out: string }> {
  const out = mkdtempSync(join(tmpdir(), 'chatferry-plan-out-'))
  const r = await runCli(['plan', '--config', cfg, '--out', out, ...args], { CHATFERRY_LOG_LEVEL: 'error' }).done
  const file = join(out, 'plan-report.json')
  if (!existsSync(file)) {
    throw new Error(`no report (exit ${r.code}): ${r.stderr.slice(-2000)}`)
  }
  return { ...r, out, report: PlanReport.parse(JSON.parse(readFileSync(file, 'utf8'))) }
}

async function itemCount(): Promise<number> {
  const c = new pg.Client({ connectionString: state.url })
  await c.connect()
  try {
    return Number((await c.query('select count(*) as n from chatferry.items')).rows[0].n)
  } finally {
    await c.end()
  }
}

describe('chatferry plan on the Mattermost fixture (Postgres)', () => {
  it('reports every count the fixture and the policies predict, writes JSON and HTML, and plans nothing into the ledger', async () => {
    const started = Date.now()
    const { code, stdout, stderr, report, out } = await plan()
    expect(code, stderr).toBe(0)
    const want = predict(seed, started)
    // Sanity of the prediction: the fixture's gotchas are in it.
    expect(want.entities.messages.rejected).toBeGreaterThanOrEqual(4)
    expect(want.entities.messages.skipped).toBeGreaterThanOrEqual(2)

    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      const got = report.entities[e]
      expect({ sourceRows: got.sourceRows, toCreate: got.toCreate, skipped: got.skipped.total, rejected: got.rejected.total }, e).toEqual(
        want.entities[e],
      )
      // Nothing is in the ledger yet: everything is new.
      expect(got.fates.new, e).toBe(got.toCreate)
      expect(got.fates.loadedUnchanged + got.fates.loadedChanged + got.fates.pending, e).toBe(0)
      expect(got.cost.requests, e).toBe(Math.ceil(want.entities[e].toCreate / QUOTA.itemsPerRequest))
      expect(got.cost.seconds, e).toBeCloseTo((got.cost.requests / QUOTA.requestsPerMinute) * 60)
    }
    // Named bad rows, with samples.
    expect(report.entities.users.rejected.byReason['unreadable username']?.samples).toEqual([MM.noname])
    expect(report.entities.groups.rejected.byReason['unreadable displayname']?.samples).toEqual([MM.noname_channel])
    expect(report.entities.messages.skipped.byReason['deletes: deleted message (deletes.mode: skip)']?.samples).toEqual(['p06deleted'])
    expect(report.entities.messages.referential['message with unknown channel']?.samples).toEqual(['p22nochannel'])
    expect(report.placeholders.count).toBe(want.placeholders)
    expect(report.entities.messages.outcomes['threads: flattened']?.count).toBe(want.replies)
    expect(report.retention.beyondRetention).toBe(want.beyondRetention)
    expect(Object.fromEntries(report.retention.months.map((m) => [m.month, m.messages]))).toEqual(want.months)
    // Cost: the quota is stated, the timeline is sequential.
    expect(report.cost.quota).toMatchObject(QUOTA)
    const total = report.cost.timeline.reduce((a, t) => a + t.requests, 0)
    expect(report.cost.requests).toBe(total)
    expect(Date.parse(report.cost.finishIfNow) - Date.parse(report.cost.startIfNow)).toBeCloseTo(report.cost.seconds * 1000, -2)
    // Identity of the report, with no secret in it.
    expect(report.chatferryVersion).toMatch(/^\d+\.\d+\.\d+/)
    expect(report.configHash).toMatch(/^[0-9a-f]{64}$/)
    expect(report.sourceSnapshotAt).not.toBeNull()
    expect(report.diff).toBeNull()
    const json = readFileSync(join(out, 'plan-report.json'), 'utf8')
    const html = readFileSync(join(out, 'plan-report.html'), 'utf8')
    for (const text of [json, html, stdout]) {
      expect(text).not.toContain('not-a-real-key-0123456789')
      expect(text).not.toContain(new URL(state.url).password || '\u0000')
    }
    expect(stdout).toMatch(/^messages\s+/m)
    expect(stdout).toContain('requests/min')
    // A dry run: no item, cursor or id decision in the ledger.
    expect(await itemCount()).toBe(0)
  })

  it('plans twice with rows added in between: the diff reports exactly those rows', async () => {
    await plan() // the baseline (the previous test's plan is older still)
    const now = Date.now()
    const w = await openFixtureWriter('postgres', source.url)
    try {
      const post = (id: string, createat: number) => ({
        id,
        createat,
        updateat: now,
        editat: 0,
        deleteat: 0,
        ispinned: false,
        userid: MM.alice,
        channelid: MM.town,
        rootid: '',
        originalid: '',
        message: `added ${id}`,
        type: '',
        props: '{}',
        hashtags: '',
        fileids: '[]',
        hasreactions: false,
      })
      await w.insert('posts', [post('p90added', now - 60_000), post('p91added', now - 30_000)])
      await w.insert('channels', [
        {
          id: 'c90added',
          createat: now - 120_000,
          updateat: now,
          deleteat: 0,
          teamid: MM.teamEng,
          type: 'O',
          displayname: 'Added',
          name: 'added',
          header: '',
          purpose: '',
          creatorid: MM.alice,
        },
      ])
      await w.insert('channelmembers', [
        { channelid: 'c90added', userid: MM.bob, roles: 'channel_user', schemeadmin: false, schemeguest: false, schemeuser: true, lastupdateat: now },
      ])
    } finally {
      await w.close()
    }
    const { code, report } = await plan()
    expect(code).toBe(0)
    const diff = report.diff
    expect(diff).not.toBeNull()
    const d = diff!.entities
    expect([d.users.sourceRows, d.groups.sourceRows, d.members.sourceRows, d.messages.sourceRows]).toEqual([0, 1, 1, 2])
    expect([d.users.toCreate, d.groups.toCreate, d.members.toCreate, d.messages.toCreate]).toEqual([0, 1, 1, 2])
    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      expect(d[e].rejected, e).toBe(0)
      expect(d[e].skipped, e).toBe(0)
    }
    expect(d.messages.changedSincePrevious?.samples.sort()).toEqual(['p90added', 'p91added'])
    expect(d.groups.changedSincePrevious?.samples).toEqual(['c90added'])
    expect(d.members.changedSincePrevious?.samples).toEqual(['c90added/u02bob'])
    expect(d.users.changedSincePrevious?.count).toBe(0)
    expect(diff!.lines.join('\n')).toMatch(/messages: \+2 source rows, \+2 to create/)
    expect(diff!.lines.join('\n')).toMatch(/groups: \+1 source rows, \+1 to create/)
    expect(await itemCount()).toBe(0)
  })

  it('exits 3 when a --fail-on gate holds, 0 when none does, 2 on a bad gate', async () => {
    const failing = await plan(['--fail-on', 'rejected>0', '--fail-on', 'placeholders>100'])
    expect(failing.code).toBe(3)
    expect(failing.report.gates).toEqual([
      { expression: 'rejected>0', value: expect.any(Number), passed: false },
      { expression: 'placeholders>100', value: 0, passed: true },
    ])
    expect(failing.stdout).toContain('gate rejected>0: FAILED')
    const passing = await plan(['--fail-on', 'rejected.users>=100,hours>48'])
    expect(passing.code).toBe(0)
    expect(passing.report.gates.every((g) => g.passed)).toBe(true)
    const bad = await runCli(['plan', '--config', cfg, '--fail-on', 'nonsense>>1']).done
    expect(bad.code).toBe(2)
    expect(bad.stderr).toContain('--fail-on')
  })
})
