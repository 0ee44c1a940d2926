/**
 * After a full `chatferry run` of the Mattermost fixture (Postgres) into the sandbox:
 * - `chatferry plan` leaves the ledger's items, cursors and id map and the sandbox untouched (no
 *   data-import request), and classifies every item as loaded and unchanged; a source row edited
 *   afterwards shows up as loaded-but-changed with the field that changed;
 * - `chatferry verify` reports zero mismatches (exit 0);
 * - after deleting and altering items in the sandbox behind chatferry's back (SQL on schema
 *   `sandbox`: a message's text, sender and sentAt changed, one deleted, one added), it reports
 *   exactly those, each with its legacy id and target key (exit 3).
 * The sandbox lists messages as published, without `muid`: verify matches them by the legacy id
 * chatferry writes into `data.metadata`.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { sql } from 'kysely'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { stringify } from 'yaml'

import { PlanReport, VerifyReport } from '../../../src/report/schema.ts'
import { expectedMattermost } from '../../fixtures/mattermost/expected.ts'
import { loadMattermostFixture, type MattermostSeed, MM, openFixtureWriter } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { http, startTestSandbox, type TestApp, type TestSandbox } from '../../helpers/sandbox.ts'

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let app: TestApp
let seed: MattermostSeed
let cfg: string

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_verify_src')
  state = await createTestDatabase('cf_verify_state')
  seed = await loadMattermostFixture('postgres', source.url)
  // The fixture is from January 2024: the app has extended retention.
  app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  const dir = mkdtempSync(join(tmpdir(), 'chatferry-verify-'))
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
      policies: { retention: { oldMessages: 'send' } },
      load: { quotaWindowMs: 10_000 },
    }),
  )
  const run = await runCli(['run', '--config', cfg], { CHATFERRY_LOG_LEVEL: 'error' }).done
  // The fixture has bad rows: the run finishes with rejects.
  expect(run.code, run.stderr.slice(-3000)).toBe(3)
})

afterAll(async () => {
  await tsb?.close()
  await state?.drop()
  await source?.drop()
})

async function ledgerSnapshot(): Promise<string> {
  const c = new pg.Client({ connectionString: state.url })
  await c.connect()
  try {
    const items = await c.query(
      'select id, entity, legacy_id, target_key, payload_hash, loaded_hash, status, done_reason, attempts, batch_id, updated_at from chatferry.items order by id',
    )
    const cursors = await c.query('select * from chatferry.cursors order by entity')
    const ids = await c.query('select * from chatferry.id_map order by kind, legacy_id')
    return JSON.stringify([items.rows, cursors.rows, ids.rows])
  } finally {
    await c.end()
  }
}

async function planCli(args: string[] = []) {
  const out = mkdtempSync(join(tmpdir(), 'chatferry-plan-out-'))
  const r = await runCli(['plan', '--config', cfg, '--out', out, ...args], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { ...r, report: PlanReport.parse(JSON.parse(readFileSync(join(out, 'plan-report.json'), 'utf8'))) }
}

async function verifyCli(args: string[] = []) {
  const out = mkdtempSync(join(tmpdir(), 'chatferry-verify-out-'))
  const r = await runCli(['verify', '--config', cfg, '--out', out, ...args], { CHATFERRY_LOG_LEVEL: 'error' }).done
  return { ...r, out, report: VerifyReport.parse(JSON.parse(readFileSync(join(out, 'verify-report.json'), 'utf8'))) }
}

describe('plan and verify after a full load of the Mattermost fixture', () => {
  it('plan leaves the ledger and the sandbox untouched and sees every loaded item as unchanged; a source edit shows as loaded-but-changed', async () => {
    const before = await ledgerSnapshot()
    const requestsBefore = (await tsb.sandbox.requests(app.id)).length
    const { code, stderr, report } = await planCli(['--check-target'])
    expect(code, stderr).toBe(0)
    expect(await ledgerSnapshot()).toBe(before)
    expect((await tsb.sandbox.requests(app.id)).length).toBe(requestsBefore)
    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      const x = report.entities[e]
      expect(x.toCreate, e).toBe(0)
      expect(x.fates.loadedChanged, e).toBe(0)
      expect(x.fates.loadedUnchanged, e).toBe(x.items)
    }
    // The pre-flight: the key works, and nothing is about to be created that already exists.
    expect(report.target).toMatchObject({ ok: true, apiKey: { works: true, fullAccess: true } })
    expect(report.target?.existing.users).toMatchObject({ checked: true, count: 0 })

    const w = await openFixtureWriter('postgres', source.url)
    try {
      await w.exec(`UPDATE posts SET message = 'Same millisecond, edited', updateat = (extract(epoch from now()) * 1000)::bigint WHERE id = 'p03tie'`)
    } finally {
      await w.close()
    }
    const changed = await planCli()
    expect(changed.code).toBe(0)
    expect(changed.report.entities.messages.fates.loadedChanged).toBe(1)
    expect(changed.report.entities.messages.samples.loadedChanged).toEqual([{ legacyId: 'p03tie', targetKey: 'p03tie' }])
    expect(Object.keys(changed.report.entities.messages.changedFields)).toEqual(['data.text'])
    expect(changed.report.diff?.entities.messages.changedSincePrevious?.samples).toEqual(['p03tie'])
    expect(await ledgerSnapshot()).toBe(before)
    // Put the row back for the verify tests.
    const back = await openFixtureWriter('postgres', source.url)
    try {
      await back.exec(`UPDATE posts SET message = 'Same millisecond' WHERE id = 'p03tie'`)
    } finally {
      await back.close()
    }
  })

  it('plan --check-target for a job whose ledger is empty predicts every user, group and member as already present', async () => {
    const { code, stderr, report } = await planCli(['--check-target', '--new-job', '--job', 'fresh-job'])
    expect(code, stderr).toBe(0)
    expect(report.target?.ok).toBe(true)
    expect(report.target?.region).toMatchObject({ configured: 'us' })
    for (const e of ['users', 'groups', 'members'] as const) {
      expect(report.entities[e].toCreate, e).toBeGreaterThan(0)
      expect(report.entities[e].alreadyPresent, e).toBe(report.entities[e].toCreate)
    }
    expect(report.entities.messages.alreadyPresent).toBeNull()
  })

  it('plan --check-target with a wrong apiKey reports the problem and exits 3', async () => {
    const bad = cfg.replace(/chatferry\.yaml$/, 'bad-key.yaml')
    writeFileSync(bad, readFileSync(cfg, 'utf8').replace(app.apiKey, 'f'.repeat(40)))
    const out = mkdtempSync(join(tmpdir(), 'chatferry-plan-out-'))
    const r = await runCli(['plan', '--config', bad, '--out', out, '--check-target', '--new-job', '--job', 'bad-key-job'], {
      CHATFERRY_LOG_LEVEL: 'error',
    }).done
    expect(r.code, r.stderr).toBe(3)
    const report = PlanReport.parse(JSON.parse(readFileSync(join(out, 'plan-report.json'), 'utf8')))
    expect(report.target).toMatchObject({ ok: false, apiKey: { works: false } })
    expect(r.stdout).toContain('AUTH_ERR_APIKEY_NOT_FOUND')
    expect(readFileSync(join(out, 'plan-report.json'), 'utf8')).not.toContain('f'.repeat(40))
  })

  it('verify after the full load: zero mismatches, every entity counted on both sides and in the source', async () => {
    const { code, stdout, stderr, report } = await verifyCli(['--sample', '1000'])
    expect(code, `${stdout}\n${stderr}`).toBe(0)
    expect(report.totals).toEqual({ mismatches: 0, unexplained: 0 })
    const rows = expectedMattermost(seed)
    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      const x = report.entities[e]
      expect(x.platform, e).toBe(x.ledgerDone)
      expect(x.source?.rows, e).toBe(rows[e].length)
    }
    // The sandbox lists messages as published, without muid: every one is matched by the legacy id
    // chatferry wrote into data.metadata, and the whole sample is compared field by field.
    const listed = await http(`${app.baseUrl}/messages?limit=1000`, { headers: { apikey: app.apiKey } })
    expect(listed.body.data.length).toBe(report.entities.messages.platform)
    expect(listed.body.data.some((m: Record<string, unknown>) => 'muid' in m)).toBe(false)
    expect(report.messages.sampleCompared).toBeGreaterThan(0)
    expect(report.messages.sampleCompared).toBe(report.entities.messages.ledgerDone)
    expect(report.messages.fields).toEqual(['sender', 'receiver', 'sentAt', 'text', 'editedAt', 'deletedAt'])
    expect(report.messages).toMatchObject({
      sampleComparedBy: { legacyId: report.entities.messages.ledgerDone, fingerprint: 0 },
      listedBy: { legacyId: report.entities.messages.platform, fingerprint: 0 },
      sampleUnmatched: 0,
      // The ledger's digest of legacy ids (SQL) equals the platform's (JS) in every conversation.
      conversationsRelisted: 0,
    })
    expect(report.chat.requests).toBeGreaterThan(0)
    expect(stdout).toContain('verified: no mismatch')
    // Sign-off: the plans above ran after the load; what each would send plus what it found loaded
    // is what the ledger created or found present, and what the platform holds.
    expect(report.actualVsPlan?.planRunId).toMatch(/^plan-/)
    for (const e of ['users', 'groups', 'members', 'messages'] as const) {
      const x = report.actualVsPlan?.entities[e]
      expect(x?.plan, e).not.toBeNull()
      expect((x?.plan?.create ?? 0) + (x?.plan?.loaded ?? 0), e).toBe((x?.ledger.created ?? 0) + (x?.ledger.alreadyPresent ?? 0))
      expect(x?.platform, e).toBe(report.entities[e].platform)
      expect({ e, remaining: x?.ledger.remaining }).toEqual({ e, remaining: 0 })
    }
  })

  it('verify after items were deleted and altered in the sandbox reports exactly those, with legacy ids and target keys', async () => {
    const db = tsb.sandbox.store
    await sql`delete from sandbox.users where app_id = ${app.id} and uid = ${MM.badprops}`.execute(db)
    await sql`delete from sandbox.members where app_id = ${app.id} and guid = ${MM.secret} and uid = ${MM.alice}`.execute(db)
    await sql`delete from sandbox.messages where app_id = ${app.id} and muid = 'p09dm'`.execute(db)
    await sql`update sandbox.messages set data = jsonb_set(data, '{text}', '"tampered"') where app_id = ${app.id} and muid = 'p03tie'`.execute(db)
    await sql`update sandbox.messages set sender = ${MM.carol} where app_id = ${app.id} and muid = 'p12files'`.execute(db)
    await sql`update sandbox.messages set sent_at = sent_at + 60 where app_id = ${app.id} and muid = 'p16custom'`.execute(db)
    // A message chatferry never sent (no legacy id in its metadata), in the DM that lost p09dm: the
    // count is unchanged, the digest of legacy ids is not.
    await sql`insert into sandbox.messages (app_id, muid, conversation_id, sender, receiver_type, receiver, category, type, data, tags, sent_at, updated_at, imported_at_ms)
      select app_id, 'intruder', conversation_id, sender, receiver_type, receiver, 'message', 'text', '{"text": "not from chatferry"}'::jsonb, null, sent_at + 1, sent_at + 1, 0
      from sandbox.messages where app_id = ${app.id} and muid = 'p08dm'`.execute(db)
    const intruder = await sql<{ id: string }>`select id::text from sandbox.messages where app_id = ${app.id} and muid = 'intruder'`.execute(db)
    const intruderId = intruder.rows[0]?.id

    const { code, stdout, report, out } = await verifyCli(['--sample', '1000'])
    expect(code, stdout).toBe(3)
    const got = report.mismatches.map((m) => `${m.entity} ${m.kind} ${m.targetKey ?? '-'} ${m.legacyId ?? '-'} ${m.field ?? '-'}`).sort()
    expect(got).toEqual(
      [
        `users missing ${MM.badprops} ${MM.badprops} -`,
        `members missing ${MM.secret}_member_${MM.alice} ${MM.secret}/${MM.alice} -`,
        // The DM's count is the same, its legacy ids are not: the listing names both messages.
        'messages missing p09dm p09dm -',
        'messages field p03tie p03tie text',
        'messages field p12files p12files sender',
        'messages field p16custom p16custom sentAt',
        'messages unexpected - - -',
      ].sort(),
    )
    expect(report.mismatches.find((m) => m.kind === 'unexpected')).toMatchObject({ actual: `message ${intruderId}`, explained: false })
    expect(report.mismatches.find((m) => m.field === 'sentAt')).toMatchObject({
      actual: (report.mismatches.find((m) => m.field === 'sentAt')?.expected as number) + 60,
    })
    // Without muid: the sampled messages are matched by legacy id; the deleted one is counted as unmatched, the intruder as listed by fingerprint.
    const done = report.entities.messages.ledgerDone
    expect(report.messages).toMatchObject({
      sampleCompared: done - 1,
      sampleComparedBy: { legacyId: done - 1, fingerprint: 0 },
      sampleUnmatched: 1,
      listedBy: { fingerprint: 1 },
    })
    expect(report.entities.messages).toMatchObject({ missing: 1, unexpected: 1, duplicates: 0 })
    expect(report.mismatches.find((m) => m.field === 'text')).toMatchObject({ expected: 'Same millisecond', actual: 'tampered', explained: false })
    expect(report.messages).toMatchObject({ conversationsMismatched: 0, conversationsRelisted: 1 })
    expect(report.totals.unexplained).toBe(7)
    expect(stdout).toContain('NOT verified: 7 unexplained mismatches')
    expect(stdout).toContain('UNMATCHED: 1 sampled messages matched no listed message')
    expect(readFileSync(join(out, 'verify-report.html'), 'utf8')).toContain('p09dm')
  })
})
