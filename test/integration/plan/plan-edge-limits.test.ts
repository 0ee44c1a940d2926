/**
 * Issue 12: what a long load does to the retention window, and the platform's member limits, seen
 * before anything is sent.
 * - `plan` on a source with messages near the retention edge and a slow quota warns, with the
 *   count, in the JSON report, the terminal summary and the HTML, and `--fail-on agingOut>0` gates it;
 * - `status` on a ledger whose remaining messages will age out before their turn warns with the count;
 * - memberships beyond `target.limits` (a user in too many groups, a group with too many members)
 *   are rejected by `plan` with their reason, and `run` against a sandbox enforcing the same limits
 *   sends no request for them (the sandbox's request log).
 *
 * Timing: send times are whole minutes from the command's start (1 request per minute of 1 item),
 * and every message's edge (sentAt + 183 days) is a whole minute from `F`, the minute the test
 * started in; each group of messages is at least two minutes away from any boundary, so the
 * expected counts hold however long the commands take to start.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PlanReport } from '../../../src/report/schema.ts'
import { openLedger } from '../../../src/state/store.ts'
import {
  genericPerson,
  type GenericSeed,
  genericSourceConfig,
  loadGenericSqlFixture,
  openGenericWriter,
  type Row,
  sqlTime,
} from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { messages, runCli, users, writeConfig } from '../../helpers/ledger-fixtures.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

const DAY = 86_400_000
const MIN = 60_000
const RETENTION = 183 * DAY
/** The minute the test started in. */
const F = Math.floor(Date.now() / MIN) * MIN
/** A sentAt (ms) whose retention edge is `minutes` after F. */
const edgeAt = (minutes: number) => F - RETENTION + minutes * MIN
const LIMITS = { groupsPerUser: 2, membersPerGroup: 3 }

let tsb: TestSandbox
let state: TestDatabase

beforeAll(async () => {
  tsb = await startTestSandbox()
  state = await createTestDatabase('cf_edge_state')
})

afterAll(async () => {
  await tsb?.close()
  await state?.drop()
})

/** 4 users, 3 rooms; user 1 in all three rooms, room r1 with all four users; 5 messages 5 minutes from the edge, 3 two days from it. */
function seed(): GenericSeed {
  const person = (pid: number): Row => genericPerson(pid, Math.floor((F - 400 * DAY) / 1000))
  const room = (rid: string): Row => ({
    rid,
    title: rid,
    visibility: 'public',
    pass: null,
    owner: 1,
    info: null,
    created_iso: new Date(F - 300 * DAY).toISOString(),
    closed_iso: null,
  })
  const member = (rid: string, pid: number, day: number): Row => ({ rid, pid, role: 'participant', blocked: false, since: sqlTime(F - day * DAY) })
  const line = (lid: number, at: number): Row => ({
    lid,
    author: 1 + (lid % 2),
    room: 'r1',
    to_pid: null,
    body: `line ${lid}`,
    kind: 'text',
    files: null,
    posted: sqlTime(at),
    edited: null,
    removed: null,
    parent: null,
    reacts: null,
    ats: null,
    modified: sqlTime(at),
  })
  return {
    people: [1, 2, 3, 4].map(person),
    rooms: ['r1', 'r2', 'r3'].map(room),
    room_people: [
      member('r1', 1, 200),
      member('r1', 2, 199),
      member('r1', 3, 198),
      member('r1', 4, 197), // the 4th member of r1: beyond membersPerGroup 3
      member('r2', 1, 196),
      member('r3', 1, 195), // user 1's 3rd group: beyond groupsPerUser 2
      member('r3', 2, 194),
    ],
    // Ahead of the messages: 4 users + 3 groups + 5 members = 12 requests of one item (12 minutes).
    // Messages 1..5: edge at F + 5 min (so the plan, minutes later, still finds them in the window),
    // sent at minutes 12..16: all late. 6..8: edge two days away.
    chat_lines: [1, 2, 3, 4, 5].map((i) => line(i, edgeAt(5) + i * 1000)).concat([6, 7, 8].map((i) => line(i, edgeAt(2 * 24 * 60) + i * 1000))),
  }
}

/** Adds `target.limits` (which writeRunConfig does not write) to a configuration file. */
function withLimits(cfg: string): void {
  writeFileSync(
    cfg,
    readFileSync(cfg, 'utf8').replace(
      'target:\n',
      `target:\n  limits: { groupsPerUser: ${LIMITS.groupsPerUser}, membersPerGroup: ${LIMITS.membersPerGroup} }\n`,
    ),
  )
}

async function sqliteSource(): Promise<{ dir: string; source: Record<string, unknown> }> {
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-edge-'))
  const url = `sqlite:${join(dir, 'legacy.db')}`
  await loadGenericSqlFixture('sqlite', url, seed())
  return { dir, source: genericSourceConfig(url, 2) as unknown as Record<string, unknown> }
}

describe('plan: retention edge and member limits', () => {
  it('warns with the count of messages that age out at a slow quota, and rejects memberships beyond the limits with their reason', async () => {
    const { dir, source } = await sqliteSource()
    const cfg = writeRunConfig({
      dir,
      appId: 'edge-plan',
      apiKey: 'not-a-real-key-0123456789',
      baseUrl: 'http://127.0.0.1:9/apps/edge-plan/v3',
      stateUrl: state.url,
      source,
      requestsPerMinute: 1,
      itemsPerRequest: 1,
    })
    withLimits(cfg)
    const out = join(dir, 'reports')
    const res = await runCli(['plan', '--config', cfg, '--out', out, '--fail-on', 'agingOut>0']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    const report = PlanReport.parse(JSON.parse(readFileSync(join(out, 'plan-report.json'), 'utf8')))
    expect(report.entities.members.toCreate).toBe(5)
    expect(report.retention.edge).toMatchObject({ checked: true, messages: 8, agingOut: 5 })
    expect(report.gates).toEqual([{ expression: 'agingOut>0', value: 5, passed: false }])
    expect(res.stdout).toContain('RETENTION EDGE: 5 of 8 messages to send')
    expect(readFileSync(join(out, 'plan-report.html'), 'utf8')).toContain('5 of 8 messages to send')

    const rejected = report.entities.members.rejected.byReason
    expect(rejected["guid: over the platform's membersPerGroup limit (3)"]?.count).toBe(1)
    expect(rejected["uid: over the platform's groupsPerUser limit (2)"]?.count).toBe(1)
    expect(report.entities.members.rejected.total).toBe(2)

    // A faster quota: the messages start within seconds and none ages out.
    writeFileSync(
      cfg,
      readFileSync(cfg, 'utf8')
        .replace('requestsPerMinute: 1\n', 'requestsPerMinute: 600\n')
        .replace('itemsPerRequest: 1\n', 'itemsPerRequest: 50\n'),
    )
    const fast = await runCli(['plan', '--config', cfg, '--out', out, '--json']).done
    expect(fast.code, fast.stderr.slice(-3000)).toBe(0)
    expect(PlanReport.parse(JSON.parse(fast.stdout)).retention.edge).toMatchObject({ messages: 8, agingOut: 0, advice: '' })
  })

  it('run against a sandbox enforcing the same limits sends no request for the rejected memberships', async () => {
    const { dir, source } = await sqliteSource()
    const app = await tsb.app({ requestsPerMinute: 6000, windowMs: 10_000, maxGroupsPerUser: 2, maxMembersPerGroup: 3 })
    // A Postgres ledger: five CLI processes each opening an embedded one cost the most of this test.
    const cfg = writeRunConfig({
      dir,
      appId: app.id,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      source,
      stateUrl: state.url,
      load: { quotaWindowMs: 10_000 },
    })
    withLimits(cfg)
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)

    const rejects = JSON.parse((await runCli(['rejects', '--config', cfg, '--json', '--code', 'MEMBER_LIMIT']).done).stdout) as {
      entity: string
      targetKey: string
      message: string
    }[]
    expect(rejects.map((r) => r.targetKey).sort()).toEqual(['r1_member_4', 'r3_member_1'])
    expect(rejects.find((r) => r.targetKey === 'r1_member_4')?.message).toMatch(
      /^guid: group r1 already has 3 members planned; the platform allows at most 3 \(target.limits.membersPerGroup\)/,
    )
    expect(rejects.find((r) => r.targetKey === 'r3_member_1')?.message).toMatch(
      /^uid: user 1 is already planned in 2 groups; the platform allows at most 2 \(target.limits.groupsPerUser\)/,
    )

    const sent = (await tsb.sandbox.requests(app.id)).filter((r) => r.endpoint === 'members').flatMap((r) => r.items ?? [])
    expect(sent.map((i) => i.key).sort()).toEqual(['r1_member_1', 'r1_member_2', 'r1_member_3', 'r2_member_1', 'r3_member_2'])
    expect(sent.every((i) => i.result === 'created')).toBe(true)

    // A delta run reads changed memberships again (here two loaded ones, r1/1 and r3/2, whose join
    // time moved): the ledger counted them already, so they must not count twice (r1 would be full,
    // user 2 in 3 groups).
    const w = await openGenericWriter('sqlite', `sqlite:${join(dir, 'legacy.db')}`)
    await w.exec(`UPDATE room_people SET since = '${sqlTime(Date.now())}' WHERE (rid = 'r1' AND pid = 1) OR (rid = 'r3' AND pid = 2)`)
    await w.close()
    const delta = await runCli(['run', '--config', cfg, '--delta']).done
    expect(delta.code, delta.stderr.slice(-3000)).not.toBe(1)
    // Classified as changes of loaded memberships (not resent, not rejected as over a limit): a
    // join time the platform cannot change is reported, once per membership.
    const status = JSON.parse((await runCli(['status', '--config', cfg, '--json']).done).stdout) as {
      updates: { entities: Record<string, Record<string, number>>; byKind: { entity: string; kind: string; status: string; n: number }[] }
    }
    expect(status.updates.byKind.filter((r) => r.entity === 'members')).toEqual([
      { entity: 'members', kind: 'member.unchangeable', policy: 'report', status: 'reported', n: 2 },
    ])
    const after = JSON.parse((await runCli(['rejects', '--config', cfg, '--json', '--entity', 'members']).done).stdout) as { targetKey: string }[]
    expect(after.map((r) => r.targetKey).sort()).toEqual(['r1_member_4', 'r3_member_1'])
  })
})

describe('status: retention edge', () => {
  it('warns with the count of remaining messages that age out before the load at the quota reaches them', async () => {
    const store = await openLedger({ url: state.url })
    try {
      await store.ensureJob('edge-status', 'edge-status')
      await store.planItems('edge-status', 'users', users(3))
      // 3 users ahead (minutes 0..2); 4 messages whose edge is F + 1 min (sent at minutes 3..6: late);
      // 6 whose edge is F + 30 min (sent at minutes 7..12: in time).
      await store.planItems('edge-status', 'messages', messages(4, 3, 'late', edgeAt(1) / 1000))
      await store.planItems('edge-status', 'messages', messages(6, 3, 'safe', edgeAt(30) / 1000))
    } finally {
      await store.close()
    }
    const cfg = writeConfig({
      appId: 'edge-status',
      apiKey: 'not-a-real-key-0123456789',
      baseUrl: 'http://127.0.0.1:9/v3',
      stateUrl: state.url,
      requestsPerMinute: 1,
      itemsPerRequest: 1,
    })
    const res = await runCli(['status', '--config', cfg, '--job', 'edge-status']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(0)
    expect(res.stdout).toMatch(/WARNING retention edge: 4 of 10 messages to send .* older than 183 days/)
    const json = await runCli(['status', '--config', cfg, '--job', 'edge-status', '--json']).done
    expect((JSON.parse(json.stdout) as { retentionEdge: { agingOut: number; messages: number } }).retentionEdge).toMatchObject({
      messages: 10,
      agingOut: 4,
    })
  })
})
