/**
 * End to end, as an operator runs it: the Slack fixture export (a Slack-style ZIP, and an unpacked
 * folder) → `chatferry run` (a process) → the sandbox. The sandbox's contents are compared item by
 * item with what the seed and the policies say (expected canonical records → the documented
 * rules, test/helpers/expected-items.ts, without the connector, mappings, ledger or loader); every bad row is in
 * `chatferry rejects`; a second run sends nothing; a later export of the same workspace read with
 * `--delta` loads exactly what is new and applies an edit with one chat write; a run killed with
 * SIGKILL while it reads the export resumes to exactly the same contents.
 */
import { setTimeout as sleep } from 'node:timers/promises'

import { beforeAll, describe, expect, it } from 'vitest'

import { placeholderUid, type PoliciesInput, PoliciesSchema } from '../../../../mappings/index.ts'
import { expectedSlack } from '../../../fixtures/slack-export/expected.ts'
import { type SlackFixture, type SlackLayout, writeSlackFixture } from '../../../fixtures/slack-export/fixture.ts'
import { dayName, EXPORT_TOKEN, type Json, largeSlackSeed, SL, type SlackSeed, slackSeed, ts } from '../../../fixtures/slack-export/seed.ts'
import { createTestDatabase } from '../../../helpers/db.ts'
import { state } from '../../../helpers/expected-facts.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { compareWithExpected, countsOf, type ExpectedMigration, expectMigration, sandboxContents, writeRunConfig } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

/** The fixture is from January 2024: older than the platform's default window, so the app has extended retention. */
const EXTENDED_RETENTION = { retentionDays: 100_000 }

interface Case {
  readonly layout: SlackLayout
  readonly policies: PoliciesInput
  readonly fileUrl?: string
}

const CASES: Case[] = [
  { layout: 'zip', policies: { retention: { oldMessages: 'send' } } },
  {
    layout: 'folder',
    fileUrl: 'https://files.acme.example/slack/{id}/{name}',
    policies: {
      retention: { oldMessages: 'send' },
      deletes: { mode: 'tombstone' },
      systemMessages: { mode: 'as-user' },
      threads: { quoteParent: 4 },
    },
  },
]

const box = useFileSandbox()

/**
 * What the documented rules make of the seed (the oracle). One thing the records alone do not say:
 * #café has no creation time in the export, and chatferry gives it one second before its first
 * message (the connector's groupActivity).
 */
function expectation(seed: SlackSeed, fx: SlackFixture, c: Case, now: number): ExpectedMigration {
  const expected = expectMigration(expectedSlack(seed, { exportTime: fx.exportTime, ...(c.fileUrl ? { fileUrl: c.fileUrl } : {}) }), c.policies, now)
  const firstCafe = Math.min(...seed.messages.filter((m) => m.folder === 'café').map((m) => Number((m.raw.ts as string).split('.')[0])))
  for (const [key, g] of expected.items.groups) {
    if (expected.legacyOfKey.get(`groups ${key}`) === SL.cafe) {
      state(g, ['created_at'], { eq: firstCafe - 1 })
    }
  }
  return expected
}

const keyOf = (expected: ExpectedMigration, entity: string, legacyId: string) =>
  [...expected.legacyOfKey].find(([k, v]) => k.startsWith(`${entity} `) && v === legacyId)?.[0].slice(entity.length + 1)

describe.each(CASES)('chatferry run: the Slack fixture as a $layout → sandbox', (c) => {
  let fx: SlackFixture
  let cfg: string
  let appId: string
  let cfgOptions: Parameters<typeof writeRunConfig>[0]

  beforeAll(async () => {
    fx = await writeSlackFixture(c.layout)
    box.cleanups.push(() => fx.drop())
    const app = await box.tsb.app({ ...EXTENDED_RETENTION, requestsPerMinute: 6000, windowMs: 10_000 })
    const state = await createTestDatabase('cf_slack_state')
    box.cleanups.push(() => dropWithin(state))
    appId = app.id
    cfgOptions = {
      appId: app.id,
      stateUrl: state.url,
      apiKey: app.apiKey,
      baseUrl: app.baseUrl,
      // Small pages: day files, thread parents and placeholders cross page boundaries.
      source: { connector: 'slack-export', path: fx.path, pageSize: 4, ...(c.fileUrl ? { fileUrl: c.fileUrl } : {}) },
      policies: c.policies,
      load: { quotaWindowMs: 10_000 },
    }
    cfg = writeRunConfig(cfgOptions)
  })

  it('migrates every user, group, member and message item by item; every bad row is rejected with its id and field', async () => {
    const started = Date.now()
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(`${res.stdout}${res.stderr}`).not.toContain(EXPORT_TOKEN)

    const expected = expectation(fx.seed, fx, c, started)
    expect(expected.items.messages.size).toBeGreaterThan(20)
    expect(expected.rejects.size).toBeGreaterThanOrEqual(12)
    const actual = await sandboxContents(box.tsb.sandbox, appId)
    expect(compareWithExpected(expected.items, actual)).toEqual([])
    checkRejects(expected, await rejectsOf(cfg))

    // Spot checks straight from the seed, not through the mapping.
    const row = (e: 'users' | 'groups' | 'messages', legacyId: string) => actual[e].find((r) => r.key === keyOf(expected, e, legacyId))?.row
    expect(row('users', SL.alice)).toMatchObject({ name: 'Alice Archer' })
    expect(row('users', SL.erin)).toMatchObject({ name: 'Erin E.' })
    expect(Number(row('users', SL.dave)?.deactivated_at)).toBe(fx.seed.users.length > 0 ? Math.floor(1_704_186_000 + 7200) : 0)
    expect(row('groups', SL.mpim)).toMatchObject({ name: 'alice, bob, carol', type: 'private' })
    expect(row('groups', SL.secret)).toMatchObject({ name: 'secret-plans', type: 'private' })
    expect(row('groups', SL.cafe)).toMatchObject({ name: 'café', type: 'public' })
    const dm = row('messages', `${SL.dmAB}:${ts(110)}`)
    expect(dm).toMatchObject({ receiver_type: 'user' })
    const hello = row('messages', `${SL.general}:${ts(60)}`)?.data as { text: string }
    expect(hello.text).toMatch(/^Hi <@uid:[a-z0-9_]+> and @here: see the plan \(https:\/\/example\.com\/a\?b=1&c=2\) <3 in #random$/)
    const shot = row('messages', `${SL.general}:${ts(360)}`)
    expect(shot?.type).toBe('image')
    expect(JSON.stringify(shot?.data)).toContain(
      c.fileUrl ? 'https://files.acme.example/slack/F01SHOT/shot.png' : 'https://files.slack.com/files-pri/T01ACME-F01SHOT/shot.png',
    )
    const tombstone = row('messages', `${SL.secret}:${ts(90)}`)
    if (c.layout === 'zip') {
      expect(tombstone).toBeUndefined()
      expect(row('messages', `${SL.general}:${ts(0)}`)).toBeUndefined() // channel_join: systemMessages skip
    } else {
      expect((tombstone?.data as { text: string }).text).toBe('This message was deleted.')
      expect(row('messages', `${SL.general}:${ts(0)}`)).toMatchObject({ sender: 'system' })
    }

    // A second run changes nothing: nothing sent again.
    await box.tsb.sandbox.whenIdle()
    const before = (await box.tsb.sandbox.requests(appId)).length
    const again = await runCli(['run', '--config', cfg]).done
    expect(again.code, again.stderr.slice(-3000)).toBe(3)
    await box.tsb.sandbox.whenIdle()
    expect((await box.tsb.sandbox.requests(appId)).length).toBe(before)
  }, 120_000)

  it('--delta on a later export of the workspace loads exactly the new user and messages, and applies an edit with one chat write', async () => {
    const now = Date.now()
    const later = slackSeed()
    const zed = {
      ...(later.users[1] as Json),
      id: 'U10ZED',
      name: 'zed',
      real_name: 'Zed Zulu',
      profile: { real_name: 'Zed Zulu', email: 'zed@acme.example' },
      updated: 1_704_186_000 + 5 * 86_400,
    }
    const d = dayName(6)
    const m = (user: string, s: number, text: string, extra: Json = {}): Json => ({ type: 'message', user, text, ts: ts(s), ...extra })
    const edited = later.messages.find((x) => x.raw.ts === ts(300) && x.folder === 'general')
    const newer: SlackSeed = {
      ...later,
      users: [...later.users.slice(0, 9), zed, ...later.users.slice(9)],
      brokenUsers: { 10: later.brokenUsers[9] as string },
      messages: [
        ...later.messages.map((x) =>
          x === edited
            ? { ...x, raw: { ...x.raw, text: 'Edited again', edited: { user: SL.alice, ts: ts(6 * 86_400) } }, want: { text: 'Edited again' } }
            : x,
        ),
        {
          folder: 'general',
          day: d,
          raw: m('U10ZED', 6 * 86_400 + 10, 'Hi all, <@U01ALICE> told me to join'),
          want: { text: 'Hi all, @alice told me to join', mentions: [SL.alice], handles: { alice: SL.alice } },
        },
        {
          folder: 'general',
          day: d,
          raw: m(SL.alice, 6 * 86_400 + 20, 'Welcome <@U10ZED>!', { thread_ts: ts(6 * 86_400 + 10), parent_user_id: 'U10ZED' }),
          want: { text: 'Welcome @zed!', mentions: ['U10ZED'], handles: { zed: 'U10ZED' } },
        },
        { folder: SL.dmAB, day: d, raw: m(SL.bob, 6 * 86_400 + 30, 'Still there?'), want: { text: 'Still there?' } },
        { folder: 'general', day: d, raw: m('U97GHOST', 6 * 86_400 + 40, 'Boo'), want: { text: 'Boo' } },
      ],
    }
    const fx2 = await writeSlackFixture(c.layout, newer)
    box.cleanups.push(() => fx2.drop())
    const cfg2 = writeRunConfig({ ...cfgOptions, source: { ...cfgOptions.source, path: fx2.path }, dir: cfg.replace(/\/chatferry\.yaml$/, '') })

    const before = await sandboxContents(box.tsb.sandbox, appId)
    await box.tsb.sandbox.whenIdle()
    const requestsBefore = (await box.tsb.sandbox.requests(appId)).length
    const res = await runCli(['run', '--config', cfg2, '--delta']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)

    const after = await sandboxContents(box.tsb.sandbox, appId)
    const expected = expectation(newer, fx2, c, now)
    expect(compareWithExpected(expected.items, after)).toEqual([])
    const keys = (x: typeof after) => new Set(Object.entries(x).flatMap(([e, rows]) => rows.map((r) => `${e} ${r.key}`)))
    const old = keys(before)
    const fresh = [...keys(after)].filter((k) => !old.has(k)).sort()
    const ghost = placeholderUid('U97GHOST', PoliciesSchema.parse(c.policies).missingUsers.uidPrefix)
    const k = (e: string, id: string) => `${e} ${keyOf(expected, e, id) as string}`
    expect(fresh).toEqual(
      [
        k('users', 'U10ZED'),
        `users ${ghost}`,
        ...[10, 20, 30, 40].map((s) => k('messages', `${s === 30 ? SL.dmAB : SL.general}:${ts(6 * 86_400 + s)}`)),
      ].sort(),
    )
    await box.tsb.sandbox.whenIdle()
    const sent = (await box.tsb.sandbox.requests(appId)).slice(requestsBefore)
    const imports = sent.filter((r) => ['users', 'groups', 'members', 'messages'].includes(r.endpoint))
    expect(imports.filter((r) => r.status === 200).reduce((n, r) => n + (r.itemCount ?? 0), 0)).toBe(6)
    expect(sent.filter((r) => r.endpoint.includes('.')).map((r) => `${r.endpoint} ${r.status} ${(r.items ?? []).length}`)).toEqual([
      'messages.update 200 1',
    ])
    const reply = after.messages.find((x) => x.key === keyOf(expected, 'messages', `${SL.general}:${ts(6 * 86_400 + 20)}`))?.row.data as {
      text: string
    }
    expect(reply.text).toContain(`<@uid:${keyOf(expected, 'users', 'U10ZED') as string}>`)
  }, 120_000)
})

it('a run killed with SIGKILL while it reads the export resumes to exactly the expected contents', async () => {
  const seed = largeSlackSeed(3000)
  const fx = await writeSlackFixture('zip', seed)
  box.cleanups.push(() => fx.drop())
  const policies: PoliciesInput = { retention: { oldMessages: 'send' }, threads: { quoteParent: true } }
  const app = await box.tsb.app({ ...EXTENDED_RETENTION, requestsPerMinute: 6000, windowMs: 10_000 })
  const state = await createTestDatabase('cf_slack_state')
  box.cleanups.push(() => dropWithin(state))
  const cfg = writeRunConfig({
    appId: app.id,
    stateUrl: state.url,
    apiKey: app.apiKey,
    baseUrl: app.baseUrl,
    source: { connector: 'slack-export', path: fx.path, pageSize: 10 },
    policies,
    load: { quotaWindowMs: 10_000 },
  })
  const started = Date.now()
  const first = runCli(['run', '--config', cfg])
  await first.waitFor('planned members', 120_000)
  await sleep(200 + Math.floor(Math.random() * 400))
  first.child.kill('SIGKILL')
  const k = await first.done
  expect(k.signal).toBe('SIGKILL')
  expect(k.stdout).not.toMatch(/policy outcomes:/)
  expect(countsOf(await sandboxContents(box.tsb.sandbox, app.id)).messages).toBe(0)

  const last = await runCli(['run', '--config', cfg]).done
  expect(last.code, last.stderr.slice(-3000)).toBe(3)
  const c: Case = { layout: 'zip', policies }
  const expected = expectation(seed, fx, c, started)
  expect(expected.items.messages.size).toBeGreaterThan(3000)
  expect(compareWithExpected(expected.items, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
  checkRejects(expected, await rejectsOf(cfg))
}, 300_000)
