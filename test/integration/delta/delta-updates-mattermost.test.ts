/**
 * A delta on the Mattermost fixture (Postgres) after a full run records exactly the update intents
 * its changes ask for (issue 13): a renamed and a deactivated user (`DeleteAt`), a channel made
 * private, a member promoted (`SchemeAdmin`) and one removed (the `ChannelMembers` row deleted), a
 * post edited, one soft-deleted (`DeleteAt`) and one purged (found with `--detect-deletes`). Every
 * unchanged row the delta reads again yields nothing. Read from the ledger.
 */
import { sql } from 'kysely'
import { afterAll, beforeAll, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { openLedger } from '../../../src/state/store.ts'
import { loadMattermostFixture, MM, openFixtureWriter } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { runCli } from '../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../helpers/loader-harness.ts'
import { writeRunConfig } from '../../helpers/run-e2e.ts'
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts'

let tsb: TestSandbox
let source: TestDatabase
let state: TestDatabase
let cfg: string

beforeAll(async () => {
  tsb = await startTestSandbox()
  source = await createTestDatabase('cf_mm_delta_src')
  state = await createTestDatabase('cf_mm_delta_state')
  await loadMattermostFixture('postgres', source.url)
  const app = await tsb.app({ retentionDays: 100_000, requestsPerMinute: 6000, windowMs: 10_000 })
  cfg = writeRunConfig({
    appId: app.id,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    stateUrl: state.url,
    source: { connector: 'mattermost', url: source.url, pageSize: 4 },
    policies: { retention: { oldMessages: 'send' } },
    load: { quotaWindowMs: 10_000 },
  })
  const full = await runCli(['run', '--config', cfg]).done
  // The fixture has bad rows: the run finishes with rejects.
  expect(full.code, full.stderr.slice(-3000)).toBe(3)
})

afterAll(async () => {
  await tsb?.close()
  await dropWithin(source)
  await dropWithin(state)
})

it('run --delta --detect-deletes records exactly the intents of the changes, nothing for the rows read again unchanged', async () => {
  const now = Date.now()
  const w = await openFixtureWriter('postgres', source.url)
  try {
    await w.exec(`UPDATE users SET firstname = 'Alicia', updateat = ${now} WHERE id = '${MM.alice}'`)
    await w.exec(`UPDATE users SET deleteat = ${now}, updateat = ${now} WHERE id = '${MM.carol}'`)
    await w.exec(`UPDATE channels SET type = 'P', updateat = ${now} WHERE id = '${MM.town}'`)
    await w.exec(`UPDATE channelmembers SET schemeadmin = true, lastupdateat = ${now} WHERE channelid = '${MM.town}' AND userid = '${MM.bob}'`)
    await w.exec(`DELETE FROM channelmembers WHERE channelid = '${MM.town}' AND userid = '${MM.dave}'`)
    await w.exec(`UPDATE posts SET message = 'Thread reply (edited)', editat = ${now}, updateat = ${now} WHERE id = 'p02reply'`)
    await w.exec(`UPDATE posts SET deleteat = ${now}, updateat = ${now} WHERE id = 'p09dm'`)
    await w.exec(`DELETE FROM posts WHERE id = 'p10self'`)
  } finally {
    await w.close()
  }
  const res = await runCli(['run', '--config', cfg, '--delta', '--detect-deletes']).done
  expect(res.code, res.stderr.slice(-3000)).toBe(3)

  const store = await openLedger({ url: state.url })
  try {
    const rows = await sql<{ entity: string; kind: string; legacy_id: string; target_key: string; policy: string; status: string; body: string }>`
      select entity, kind, legacy_id, target_key, policy, status, body from chatferry.updates order by id`.execute(inspectLedger(store))
    const state = (s: string) => (s === 'reported' ? s : ['planned', 'sent', 'done'].includes(s) ? 'applied' : s)
    expect(rows.rows.map((r) => `${r.entity} ${r.kind} ${r.legacy_id} ${r.target_key} ${r.policy} ${state(r.status)}`).sort()).toEqual(
      [
        `groups group.update ${MM.town} ${MM.town} apply applied`,
        // Dave was deactivated at the bulk load: the platform refuses his membership changes, so the
        // lane settles the kick as reported (USER_DEACTIVATED), not rejected.
        `members member.kick ${MM.town}/${MM.dave} ${MM.town}_member_${MM.dave} apply reported`,
        `members member.scope ${MM.town}/${MM.bob} ${MM.town}_member_${MM.bob} apply applied`,
        'messages message.delete p09dm p09dm apply applied',
        'messages message.delete p10self p10self report reported',
        'messages message.edit p02reply p02reply apply applied',
        `users user.deactivate ${MM.carol} ${MM.carol} apply applied`,
        `users user.update ${MM.alice} ${MM.alice} apply applied`,
      ].sort(),
    )
    const body = (kind: string) => JSON.parse(rows.rows.find((r) => r.kind === kind)?.body ?? '{}') as Record<string, unknown>
    expect(body('user.update')).toMatchObject({ name: 'Alicia Archer' })
    expect(body('group.update')).toMatchObject({ type: 'private' })
    expect(body('member.scope')).toEqual({ scope: 'admin' })
    expect(body('message.edit')).toMatchObject({ sender: MM.bob, data: { text: 'Thread reply (edited)' } })
    expect(rows.rows.find((r) => r.legacy_id === 'p09dm')?.body).toBe(JSON.stringify({ sender: MM.bob }))
  } finally {
    await store.close()
  }

  // The same delta again: the rows at the watermark's instant are read again and yield nothing new.
  const again = await runCli(['run', '--config', cfg, '--delta', '--detect-deletes']).done
  expect(again.code, again.stderr.slice(-3000)).toBe(3)
  const store2 = await openLedger({ url: state.url })
  try {
    const n = await sql<{ n: number }>`select count(*)::int as n from chatferry.updates`.execute(inspectLedger(store2))
    expect(n.rows[0]?.n).toBe(8)
  } finally {
    await store2.close()
  }
})
