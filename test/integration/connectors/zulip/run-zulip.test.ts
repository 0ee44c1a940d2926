/**
 * End to end, as a user runs it: the Zulip fixture database (realm `acme` of three) →
 * `chatferry run` (a process) → the sandbox. The sandbox's contents are compared item by item with
 * what the fixture's rows and the documented policies say should be there (expected canonical
 * records → the documented rules, test/helpers/expected-items.ts, without the connector, mappings, ledger or loader); every
 * bad row must be in `chatferry rejects --json`; a second run sends nothing; and a `--delta` run
 * after new rows and an edit loads exactly the new rows and applies the edit with one chat write.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { expectedZulip, type ZulipExpectOptions } from '../../../fixtures/zulip/expected.ts'
import {
  at,
  huddleRecipient,
  loadZulipFixture,
  message,
  openZulipWriter,
  personal,
  type Row,
  ZS,
  ZU,
  type ZulipSeed,
} from '../../../fixtures/zulip/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { expectRerunSendsNothing } from '../../../helpers/run-checks.ts'
import { compareWithExpected, expectMigration, sandboxContents, statedValue, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

interface Case {
  readonly name: string
  readonly policies: PoliciesInput
  /** Connector settings besides url and realm, mirrored in the expectation. */
  readonly source: Pick<ZulipExpectOptions, 'topics' | 'archivedMessages' | 'fileBaseUrl' | 'siteUrl'>
}

const CASES: Case[] = [
  { name: 'topics as metadata, defaults', source: {}, policies: { retention: { oldMessages: 'send' } } },
  {
    name: 'a group per topic, archived messages read as tombstones, system messages kept',
    source: {
      topics: 'group-per-topic',
      archivedMessages: 'read',
      fileBaseUrl: 'https://zulip.example.com/user_uploads',
      siteUrl: 'https://zulip.example.com',
    },
    policies: { retention: { oldMessages: 'send' }, deletes: { mode: 'tombstone' }, systemMessages: { mode: 'as-user' } },
  },
]

const box = useFileSandbox()

describe.each(CASES)('chatferry run: the Zulip fixture ($name) → sandbox', ({ policies, source: settings }) => {
  let source: TestDatabase
  let app: TestApp
  let seed: ZulipSeed
  let cfg: string

  beforeAll(async () => {
    source = await createTestDatabase('cf_zulip_src')
    box.cleanups.push(() => dropWithin(source))
    seed = await loadZulipFixture(source.url)
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_zulip_state',
      // Small pages: every entity crosses page boundaries.
      source: { connector: 'zulip', url: source.url, realm: 'acme', pageSize: 3, ...settings },
      policies,
    }))
  })

  it('migrates every user, group, member and message item by item; every bad row is rejected with its id and field; a rerun sends nothing', async () => {
    const started = Date.now()
    const res = await runCli(['run', '--config', cfg]).done
    // The fixture has bad rows: the run finishes with rejects.
    expect(res.code, res.stderr.slice(-3000)).toBe(3)

    const expected = expectMigration(expectedZulip(seed, settings), policies, started)
    expect(expected.items.messages.size).toBeGreaterThan(8)
    expect(expected.rejects.size).toBeGreaterThanOrEqual(7)
    const actual = await sandboxContents(box.tsb.sandbox, app.id)
    expect(compareWithExpected(expected.items, actual)).toEqual([])
    checkRejects(expected, await rejectsOf(cfg))

    // Spot checks straight from the fixture's rows, not through the mapping.
    const row = (e: 'users' | 'groups' | 'messages', k: string) => actual[e].find((r) => r.key === k)?.row
    const text = (k: string) => (row('messages', k)?.data as { text?: string } | undefined)?.text
    expect(row('users', String(ZU.alice))).toMatchObject({ name: 'Alice Archer' })
    expect(Number(row('users', String(ZU.dave))?.deactivated_at)).toBe(Math.floor(Date.parse(at(-30)) / 1000))
    expect(row('users', String(ZU.olga))).toBeUndefined()
    expect(row('users', String(ZU.internalHuman))).toBeUndefined()
    expect(row('groups', 'dm-1')).toMatchObject({ name: 'Alice Archer, Bob Baker, Carol Clark', type: 'private' })
    expect(row('groups', 'dm-2')).toBeUndefined()
    expect(row('messages', '1010')).toMatchObject({ sender: String(ZU.bob), receiver_type: 'user', receiver: String(ZU.alice) })
    expect(row('messages', '1008')).toMatchObject({ sender: String(ZU.carol), receiver: String(ZU.carol) })
    expect(row('messages', '2001')).toBeUndefined()
    expect(text('1005')).toContain(`<@uid:${ZU.alice2}>`)
    expect(text('1005')).toContain('@**Alice Archer**')
    if (settings.topics === 'group-per-topic') {
      expect(row('messages', '1002')?.receiver).toBe(row('messages', '1001')?.receiver)
      expect(actual.groups.find((g) => g.row.name === 'general > hello')).toBeDefined()
      expect(row('messages', '1101')).toBeDefined()
      expect(row('messages', '1011')).toBeDefined()
    } else {
      expect(row('groups', String(ZS.oldNews))).toMatchObject({ name: 'old-news' })
      expect(row('messages', '1101')).toBeUndefined()
      expect(row('messages', '1011')).toBeUndefined()
    }

    await expectRerunSendsNothing(box.tsb, app.id, cfg)
  }, 90_000)

  it('--delta after new rows and an edit loads exactly the new messages and DM group, and applies the edit with one chat write', async () => {
    const now = Date.now()
    const iso = new Date(now).toISOString()
    const added: Row[] = [
      message(3001, 0, { date_sent: iso, content: 'Hello again @**Carol Clark**' }),
      message(3002, 0, {
        date_sent: iso,
        sender_id: ZU.carol,
        recipient_id: personal(ZU.alice),
        subject: '\u0007',
        content: 'DM',
        is_channel_message: false,
      }),
      message(3003, 0, {
        date_sent: iso,
        sender_id: ZU.gus,
        recipient_id: huddleRecipient(5),
        subject: '\u0007',
        content: 'New trio',
        is_channel_message: false,
      }),
    ]
    const w = await openZulipWriter(source.url)
    try {
      await w.insert('zerver_recipient', [{ id: huddleRecipient(5), type_id: 5, type: 3 }])
      await w.insert('zerver_huddle', [{ id: 5, huddle_hash: 'e'.repeat(40), recipient_id: huddleRecipient(5), group_size: 3 }])
      const subs = [ZU.alice, ZU.carol, ZU.gus].map((u, i) => ({
        id: 900 + i,
        user_profile_id: u,
        recipient_id: huddleRecipient(5),
        active: true,
        is_user_active: true,
        is_muted: false,
        color: '#c2c2c2',
        pin_to_top: false,
      }))
      await w.insert('zerver_subscription', subs)
      await w.insert('zerver_message', added)
      await w.exec(`UPDATE zerver_message SET content = 'Hi Bob, edited', last_edit_time = $1 WHERE id = 1006`, [iso])
      seed.zerver_recipient = [...(seed.zerver_recipient ?? []), { id: huddleRecipient(5), type_id: 5, type: 3 }]
      seed.zerver_huddle = [...(seed.zerver_huddle ?? []), { id: 5, huddle_hash: 'e'.repeat(40), recipient_id: huddleRecipient(5), group_size: 3 }]
      seed.zerver_subscription = [...(seed.zerver_subscription ?? []), ...subs]
      seed.zerver_message = [
        ...(seed.zerver_message ?? []).map((m) => (m.id === 1006 ? { ...m, content: 'Hi Bob, edited', last_edit_time: iso } : m)),
        ...added,
      ]
    } finally {
      await w.close()
    }
    const before = await sandboxContents(box.tsb.sandbox, app.id)
    await box.tsb.sandbox.whenIdle()
    const requestsBefore = (await box.tsb.sandbox.requests(app.id)).length
    const res = await runCli(['run', '--config', cfg, '--delta']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)

    const after = await sandboxContents(box.tsb.sandbox, app.id)
    const expected = expectMigration(expectedZulip(seed, settings), policies, now)
    expect(statedValue(expected.items.messages.get('1006'), 'data.text')).toContain('edited')
    expect(compareWithExpected(expected.items, after)).toEqual([])

    const keysOf = (c: typeof after) => new Set(Object.entries(c).flatMap(([e, rows]) => rows.map((r) => `${e} ${r.key}`)))
    const old = keysOf(before)
    const fresh = [...keysOf(after)].filter((k) => !old.has(k)).sort()
    const trioMembers = [ZU.alice, ZU.carol, ZU.gus].map((u) => `members dm-5_member_${u}`)
    expect(fresh).toEqual(['groups dm-5', ...trioMembers, 'messages 3001', 'messages 3002', 'messages 3003'].sort())
    await box.tsb.sandbox.whenIdle()
    const sent = (await box.tsb.sandbox.requests(app.id)).slice(requestsBefore)
    const writes = sent.filter((r) => r.endpoint.includes('.')).map((r) => `${r.endpoint} ${r.status} ${(r.items ?? []).length}`)
    expect(writes).toEqual(['messages.update 200 1'])
    expect(text(after, '3001')).toContain(`<@uid:${ZU.carol}>`)
  }, 90_000)
})

function text(c: Awaited<ReturnType<typeof sandboxContents>>, key: string): string | undefined {
  return (c.messages.find((m) => m.key === key)?.row.data as { text?: string } | undefined)?.text
}

it('an unknown realm stops `chatferry plan` before any row is read: exit 2, naming the realms the database holds, never the password', async () => {
  const db = await createTestDatabase('cf_zulip_realm')
  box.cleanups.push(() => dropWithin(db))
  await loadZulipFixture(db.url)
  const app = await box.tsb.app({ retentionDays: 100_000 })
  const cfg = writeRunConfig({ appId: app.id, apiKey: app.apiKey, baseUrl: app.baseUrl, source: { connector: 'zulip', url: db.url, realm: 'acne' } })
  const res = await runCli(['plan', '--config', cfg]).done
  expect(res.code, res.stderr).toBe(2)
  expect(res.stderr).toContain('source.realm: no Zulip realm has string_id "acne"')
  expect(res.stderr).toContain(`'acme', 'other'`)
  expect(res.stderr).not.toContain('zulipinternal')
  expect(res.stderr + res.stdout).not.toContain(new URL(db.url).password)
}, 60_000)
