/**
 * `chatferry plan` previews the conflict policy (`changes.conflicts`), end to end: a generic-sql
 * source on Postgres, a Postgres ledger, the sandbox over HTTP and the CLI as processes. After the
 * bulk load, the ledger stores what the webhook receiver would for deliveries of the platform's
 * published envelopes (through `store.platformEvents.record`, the receiver's own call): message 1
 * edited and group r1 renamed on the platform, and message 2's echo of what chatferry loaded. The
 * source then changes messages 1 and 2, group r1 and user 3. `plan` shows message 1's and r1's
 * updates as held back under `report`, dropped under `platform-wins` and flagged as overwriting the
 * platform's change under `source-wins` — in `--json`, the report files and the terminal — and
 * writes nothing to `chatferry.updates` or `chatferry.items`. The delta that follows records
 * exactly what the plan said, with the same reasons.
 */
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { PlanReport } from '../../../src/report/schema.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { envelopeHash, platformChangesOf } from '../../../src/target/webhook-changes.ts'
import type { WebhookEnvelope } from '../../../src/target/webhooks.ts'
import { CHANGES_SCHEMA, changesSource } from '../../fixtures/generic-sql/changes-source.ts'
import { openGenericWriter } from '../../fixtures/generic-sql/fixture.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { ledgerKeys } from '../../helpers/delta-e2e.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

const T = Math.floor(Date.now() / 1000) - 86_400

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let jobId: string
let msg1: { key: string; platformId: string | null }
let r1: string

function configWith(conflicts?: string): string {
  return writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: changesSource(source.url),
    policies: { retention: { oldMessages: 'send' } },
    ...(conflicts ? { changes: { conflicts } } : {}),
  })
}

async function withLedger<T>(work: (store: Awaited<ReturnType<typeof openLedger>>) => Promise<T>): Promise<T> {
  const store = await openLedger({ url: state.url, poolSize: 1 })
  try {
    return await work(store)
  } finally {
    await store.close()
  }
}

/** What a plan must not change: the job's update intents and its items' states and payloads. */
async function ledgerFingerprint(): Promise<{ updates: number; items: string }> {
  return withLedger(async (store) => {
    const u = await sql<{ n: string }>`select count(*) as n from chatferry.updates where job_id = ${jobId}`.execute(inspectLedger(store))
    const i = await sql<{ h: string }>`
      select md5(string_agg(entity || target_key || status || coalesce(payload_hash, '') || coalesce(vanished_at::text, ''), ',' order by id)) as h
      from chatferry.items where job_id = ${jobId}`.execute(inspectLedger(store))
    return { updates: Number(u.rows[0]?.n), items: i.rows[0]?.h ?? '' }
  })
}

/** Stores a delivery as the receiver does (its validated envelope, its hash, its changes). */
async function deliver(envelope: Omit<WebhookEnvelope, 'appId' | 'region' | 'webhook'>): Promise<void> {
  const full = { ...envelope, appId: app.id, region: 'us', webhook: `chatferry_${jobId}` } as WebhookEnvelope
  await withLedger((store) =>
    store.platformEvents.record(jobId, {
      eventHash: envelopeHash(full),
      trigger: full.trigger,
      webhookId: full.webhook,
      changes: platformChangesOf(full),
    }),
  )
}

function messageEdited(platformId: string, text: string): Omit<WebhookEnvelope, 'appId' | 'region' | 'webhook'> {
  const now = Math.floor(Date.now() / 1000)
  return {
    trigger: 'message_edited',
    data: { message: { data: { entities: { on: { entity: { id: platformId, editedAt: now, data: { text } } } } } } },
  }
}

async function plan(conflicts: string, ...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; cfg: string }> {
  const cfg = configWith(conflicts)
  const r = await runCli(['plan', '--config', cfg, ...args], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { ...r, cfg }
}

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_planc_src')
  state = await createTestDatabase('cf_planc_state')
  const w = await openGenericWriter('postgres', source.url)
  try {
    for (const s of CHANGES_SCHEMA) {
      await w.exec(s)
    }
    await w.insert(
      'people',
      [1, 2, 3].map((pid) => ({ pid, full_name: `Person ${pid}`, handle: `h${pid}`, joined_s: T - 3600, modified_s: T })),
    )
    await w.insert('rooms', [{ rid: 'r1', title: 'General', visibility: 'public', owner: 1, created_s: T - 3000, modified_s: T }])
    await w.insert('room_people', [
      { rid: 'r1', pid: 1, role: 'admin', modified_s: T },
      { rid: 'r1', pid: 2, role: 'participant', modified_s: T },
    ])
    await w.insert(
      'lines',
      [1, 2, 3].map((lid) => ({ lid, author: 1, room: 'r1', body: `line ${lid}`, posted_s: T + lid, edited_s: null, modified_s: T + lid })),
    )
  } finally {
    await w.close()
  }
  app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  jobId = app.id.toLowerCase()
  const bulk = await runCli(['run', '--config', configWith()]).done
  expect(bulk.code, bulk.stderr.slice(-3000)).toBe(0)

  const messages = await ledgerKeys(state.url, jobId, 'messages')
  msg1 = messages.get('1') as { key: string; platformId: string | null }
  r1 = (await ledgerKeys(state.url, jobId, 'groups')).get('r1')?.key as string
  expect(msg1.platformId).toBeTruthy()
  // Changed on the platform: message 1 edited, group r1 renamed. Message 2's delivery reports what
  // chatferry loaded (its echo): not a change made on the platform.
  await deliver(messageEdited(msg1.platformId as string, 'edited on the platform'))
  await deliver({
    trigger: 'group_updated',
    data: { group: { guid: r1, name: 'Renamed on the platform', type: 'public', updatedAt: Math.floor(Date.now() / 1000) } },
  })
  await deliver(messageEdited(messages.get('2')?.platformId as string, 'line 2'))
  const origins = await withLedger(async (store) => {
    const r = await sql<{
      s: string
    }>`select trigger || ' ' || origin as s from chatferry.platform_events where job_id = ${jobId} order by id`.execute(inspectLedger(store))
    return r.rows.map((x) => x.s)
  })
  expect(origins).toEqual(['message_edited platform', 'group_updated platform', 'message_edited chatferry'])

  // The source changes both messages, the group and a user (users cannot conflict: no trigger).
  const now = Math.floor(Date.now() / 1000)
  const s = await openGenericWriter('postgres', source.url)
  try {
    await s.exec(`UPDATE lines SET body = 'line 1 edited in the source', edited_s = ${now}, modified_s = ${now} WHERE lid = 1`)
    await s.exec(`UPDATE lines SET body = 'line 2 edited in the source', edited_s = ${now}, modified_s = ${now} WHERE lid = 2`)
    await s.exec(`UPDATE rooms SET title = 'Renamed in the source', modified_s = ${now} WHERE rid = 'r1'`)
    await s.exec(`UPDATE people SET full_name = 'Person Three', modified_s = ${now} WHERE pid = 3`)
  } finally {
    await s.close()
  }
}, 120_000)

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

const RECEIVED =
  /; changed on the platform after chatferry wrote it \((message_edited|group_updated) received \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\)$/

describe('chatferry plan previews changes.conflicts', () => {
  it('report: the updates of items changed on the platform are counted as held back (conflict), with the trigger and when it was received; nothing is written', async () => {
    const before = await ledgerFingerprint()
    const r = await plan('report', '--json')
    expect(r.code, r.stderr.slice(-3000)).toBe(0)
    const report = PlanReport.parse(JSON.parse(r.stdout))
    // Every intent is still tallied by policy: message 1 and 2 edits, the rename, the user's rename.
    expect(report.entities.messages.updates['message.edit']?.apply?.count).toBe(2)
    expect(report.entities.groups.updates['group.update']?.apply?.count).toBe(1)
    expect(report.entities.users.updates['user.update']?.apply?.count).toBe(1)
    // Of those, message 1's and r1's: held back. Message 2 (only chatferry's echo) and the user: not.
    const m = report.entities.messages.conflicts
    expect(Object.keys(m)).toEqual(['message.edit'])
    expect(m['message.edit']).toEqual({ conflict: { count: 1, samples: [expect.objectContaining({ legacyId: '1', targetKey: msg1.key })] } })
    expect(m['message.edit']?.conflict?.samples[0]?.reason).toMatch(RECEIVED)
    expect(m['message.edit']?.conflict?.samples[0]?.reason).toContain('message_edited received')
    expect(report.entities.groups.conflicts).toEqual({
      'group.update': { conflict: { count: 1, samples: [expect.objectContaining({ legacyId: 'r1', targetKey: r1 })] } },
    })
    expect(report.entities.groups.conflicts['group.update']?.conflict?.samples[0]?.reason).toContain('group_updated received')
    expect(report.entities.users.conflicts).toEqual({})
    expect(report.entities.members.conflicts).toEqual({})
    expect(await ledgerFingerprint()).toEqual(before)
  }, 60_000)

  it('platform-wins: counted as dropped; source-wins: applied but flagged as overwriting the platform’s change — in the terminal and the report files too', async () => {
    const before = await ledgerFingerprint()
    const dropped = PlanReport.parse(JSON.parse((await plan('platform-wins', '--json')).stdout))
    expect(dropped.entities.messages.conflicts['message.edit']).toEqual({
      dropped: { count: 1, samples: [expect.objectContaining({ legacyId: '1', targetKey: msg1.key, reason: expect.stringMatching(RECEIVED) })] },
    })
    expect(dropped.entities.groups.conflicts['group.update']?.dropped?.count).toBe(1)

    const files = mkdtempSync(join(tmpdir(), 'chatferry-plan-conflicts-'))
    const out = (await plan('source-wins', '--out', files)).stdout
    const r = await plan('source-wins', '--json')
    const wins = PlanReport.parse(JSON.parse(r.stdout))
    expect(wins.entities.messages.conflicts['message.edit']).toEqual({
      overwrites: { count: 1, samples: [expect.objectContaining({ legacyId: '1', targetKey: msg1.key, reason: expect.stringMatching(RECEIVED) })] },
    })
    expect(wins.entities.groups.conflicts['group.update']?.overwrites?.count).toBe(1)
    // Still applied: the policy tally is the same under every conflict policy.
    expect(wins.entities.messages.updates['message.edit']?.apply?.count).toBe(2)

    // The terminal summary names each, with a sample's legacy id, key and reason.
    expect(out).toContain(
      `CHANGED ON THE PLATFORM: 1 message.edit of loaded messages overwrites a change made on the platform (changes.conflicts: source-wins) — e.g. 1 → ${msg1.key}: `,
    )
    expect(out).toContain('CHANGED ON THE PLATFORM: 1 group.update of loaded groups overwrites a change made on the platform')
    const json = PlanReport.parse(JSON.parse(readFileSync(join(files, 'plan-report.json'), 'utf8')))
    expect(json.entities.messages.conflicts['message.edit']?.overwrites?.count).toBe(1)
    const html = readFileSync(join(files, 'plan-report.html'), 'utf8')
    expect(html).toContain('<table id="conflicts">')
    expect(html).toContain('overwrites a change made on the platform (changes.conflicts: source-wins)')
    const report = await plan('report')
    expect(report.stdout).toContain(
      'CHANGED ON THE PLATFORM: 1 message.edit of loaded messages held back, status conflict (changes.conflicts: report)',
    )
    expect(await ledgerFingerprint()).toEqual(before)
  }, 90_000)

  it('the delta then records what the plan previewed, with the same reasons', async () => {
    const previewed = PlanReport.parse(JSON.parse((await plan('report', '--json')).stdout))
    const delta = await runCli(['run', '--delta', '--config', configWith('report')]).done
    expect(delta.code, delta.stderr.slice(-3000)).toBe(0)
    const recorded = await withLedger(async (store) => {
      const r = await sql<{ kind: string; legacy_id: string; status: string; reason: string }>`
        select kind, legacy_id, status, reason from chatferry.updates where job_id = ${jobId} order by id`.execute(inspectLedger(store))
      return r.rows
    })
    expect(recorded.map((u) => `${u.kind} ${u.legacy_id} ${u.status}`).sort()).toEqual(
      ['group.update r1 conflict', 'message.edit 1 conflict', 'message.edit 2 done', 'user.update 3 done'].sort(),
    )
    expect(recorded.find((u) => u.legacy_id === '1')?.reason).toBe(
      previewed.entities.messages.conflicts['message.edit']?.conflict?.samples[0]?.reason,
    )
    expect(recorded.find((u) => u.legacy_id === 'r1')?.reason).toBe(previewed.entities.groups.conflicts['group.update']?.conflict?.samples[0]?.reason)
  }, 90_000)
})
