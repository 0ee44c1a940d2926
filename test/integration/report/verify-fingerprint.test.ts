/**
 * `chatferry verify` for messages imported without legacy ids in their metadata
 * (`policies.legacyMetadata.ids: false`, as an older chatferry or a user module might leave them):
 * the sandbox lists messages as published, without `muid`, so verify matches them by fingerprint
 * (sender, receiverType, receiver, sentAt, text). After a full load of the Mattermost fixture it
 * compares the whole sample that way; after tampering, it names exactly the tampered messages, and a
 * sampled message it can no longer match is reported (missing, counted as unmatched), not skipped.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { VerifyReport } from '../../../src/report/schema.ts'
import { loadMattermostFixture } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let cfg: string

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_verify_fp_src')
  state = await createTestDatabase('cf_verify_fp_state')
  await loadMattermostFixture('postgres', source.url)
  app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-verify-fp-'))
  cfg = join(dir, 'chatferry.yaml')
  writeFileSync(
    cfg,
    stringify({
      target: {
        appId: app.id,
        region: 'us',
        apiKey: app.apiKey,
        baseUrl: app.baseUrl,
        timeoutMs: 10_000,
        quota: { requestsPerMinute: 6000, itemsPerRequest: 50 },
      },
      state: { url: state.url },
      source: { connector: 'mattermost', url: source.url, pageSize: 5 },
      policies: { retention: { oldMessages: 'send' }, legacyMetadata: { ids: false } },
      load: { quotaWindowMs: 10_000 },
    }),
  )
  const run = await runCli(['run', '--config', cfg], { CHATFERRY_LOG_LEVEL: 'error' }).done
  expect(run.code, run.stderr.slice(-3000)).toBe(3)
})

afterAll(async () => {
  await tsb?.close()
  await state?.drop()
  await source?.drop()
})

async function verifyCli() {
  const out = mkdtempSync(join(tmpdir(), 'chatferry-verify-fp-out-'))
  const r = await runCli(['verify', '--config', cfg, '--out', out, '--sample', '1000', '--no-source'], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { ...r, report: VerifyReport.parse(JSON.parse(readFileSync(join(out, 'verify-report.json'), 'utf8'))) }
}

describe('verify without muid and without legacy ids: messages matched by fingerprint', () => {
  it('no message carries a legacy id, and the whole sample is still compared field by field', async () => {
    const rows = await sql<{ data: { metadata?: { legacy?: { id?: string } } } }>`select data from sandbox.messages where app_id = ${app.id}`.execute(
      tsb.sandbox.store,
    )
    expect(rows.rows.length).toBeGreaterThan(0)
    expect(rows.rows.some((r) => r.data.metadata?.legacy?.id !== undefined)).toBe(false)

    const { code, stdout, report } = await verifyCli()
    expect(code, stdout).toBe(0)
    expect(report.totals).toEqual({ mismatches: 0, unexplained: 0 })
    const done = report.entities.messages.ledgerDone
    expect(done).toBeGreaterThan(0)
    expect(report.entities.messages.platform).toBe(done)
    expect(report.messages).toMatchObject({
      sampleCompared: done,
      sampleComparedBy: { legacyId: 0, fingerprint: done },
      listedBy: { legacyId: 0, fingerprint: done },
      sampleUnmatched: 0,
      conversationsRelisted: 0,
      fields: ['sender', 'receiver', 'sentAt', 'text', 'editedAt', 'deletedAt'],
    })
  })

  it('after tampering it names exactly the tampered messages; one it cannot match any more is reported, not skipped', async () => {
    const db = tsb.sandbox.store
    // Changed text: the fingerprint no longer matches, in a conversation whose count is unchanged.
    await sql`update sandbox.messages set data = jsonb_set(data, '{text}', '"tampered"') where app_id = ${app.id} and muid = 'p03tie'`.execute(db)
    await sql`delete from sandbox.messages where app_id = ${app.id} and muid = 'p09dm'`.execute(db)
    // An exact second copy of a message: same sender, receiver, sentAt and text.
    await sql`insert into sandbox.messages (app_id, muid, conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, updated_at, imported_at_ms)
      select app_id, 'copy', conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, updated_at, 0
      from sandbox.messages where app_id = ${app.id} and muid = 'p15bot'`.execute(db)
    const conv = await sql<{ c: string }>`select conversation_id as c from sandbox.messages where app_id = ${app.id} and muid = 'p15bot'`.execute(db)
    const botConversation = conv.rows[0]?.c as string

    const { code, stdout, report } = await verifyCli()
    expect(code, stdout).toBe(3)
    const got = report.mismatches.map((m) => `${m.entity} ${m.kind} ${m.targetKey ?? '-'} ${m.legacyId ?? '-'} ${m.field ?? '-'}`).sort()
    const dm = report.mismatches.find((m) => m.kind === 'count' && m.targetKey !== botConversation)?.targetKey
    expect(got).toEqual(
      [
        'messages missing p03tie p03tie -',
        `messages count ${dm} - messages`,
        'messages missing p09dm p09dm -',
        `messages count ${botConversation} - messages`,
        'messages duplicate p15bot p15bot -',
      ].sort(),
    )
    expect(dm).toMatch(/_user_/)
    expect(report.mismatches.find((m) => m.targetKey === 'p03tie')?.note).toContain('not compared')
    const done = report.entities.messages.ledgerDone
    expect(report.messages).toMatchObject({ sampleCompared: done - 2, sampleComparedBy: { legacyId: 0, fingerprint: done - 2 }, sampleUnmatched: 2 })
    expect(report.entities.messages).toMatchObject({ missing: 2, unexpected: 0, duplicates: 1 })
    expect(stdout).toContain('UNMATCHED: 2 sampled messages matched no listed message')
  })
})
