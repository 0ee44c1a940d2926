/**
 * End to end, as a user runs it: the Rocket.Chat fixture written as a mongodump directory →
 * `chatferry run` (a process) → the sandbox. The sandbox's contents are compared item by item with
 * what the fixture's documents and the policies say should be there (expected canonical records →
 * the documented rules, test/helpers/expected-items.ts, without the connector, mappings, ledger or loader); every
 * bad document must be in `chatferry rejects --json`. Then a later dump of the same server (new
 * documents, an edit) replaces the first, and `run --delta` loads exactly what changed.
 */
import { dirname, join } from 'node:path'

import { beforeAll, describe, expect, it } from 'vitest'

import { messageMuid, placeholderUid, type PoliciesInput, PoliciesSchema, toPlatformId } from '../../../../mappings/index.ts'
import { writeRocketChatDump } from '../../../fixtures/rocketchat/dump.ts'
import { expectedRocketChat } from '../../../fixtures/rocketchat/expected.ts'
import { at, DM_ALICE_BOB, DM_SELF_CAROL, RC, type RcDoc, type RocketChatSeed, rocketChatSeed } from '../../../fixtures/rocketchat/seed.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { expectRerunSendsNothing, sentSince } from '../../../helpers/run-checks.ts'
import { compareWithExpected, expectMigration, sandboxContents, statedValue } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

interface Case {
  readonly title: string
  readonly policies: PoliciesInput
  /** Connector settings besides the path, mirrored in the expectation. */
  readonly source: { uploadsBaseUrl?: string; siteUrl?: string }
}

const CASES: Case[] = [
  { title: 'default policies', policies: { retention: { oldMessages: 'send' } }, source: {} },
  {
    title: 'tombstones, system messages as users, quoted thread parents, a site URL',
    source: { siteUrl: 'https://chat.example.com', uploadsBaseUrl: 'https://files.example.com/rc' },
    policies: {
      retention: { oldMessages: 'send' },
      deletes: { mode: 'tombstone' },
      systemMessages: { mode: 'as-user' },
      threads: { quoteParent: 4 },
    },
  },
]

/** Rocket.Chat's ids are mixed case: the platform's are their lowercased, hashed form (mappings/ids.ts). */
const pid = toPlatformId
const muid = messageMuid

const box = useFileSandbox()

it('the sample configuration deploy/samples/rocketchat.yaml passes `chatferry config check`', async () => {
  const r = await runCli(['config', 'check', '-c', join(import.meta.dirname, '../../../../deploy/samples/rocketchat.yaml')]).done
  expect(r.code, r.stderr).toBe(0)
  expect(r.stdout).toContain('"connector": "rocketchat"')
}, 60_000)

describe.each(CASES)('chatferry run: the Rocket.Chat mongodump fixture → sandbox ($title)', ({ policies, source: settings }) => {
  const seed = rocketChatSeed()
  let path: string
  let app: TestApp
  let cfg: string

  beforeAll(async () => {
    path = writeRocketChatDump(seed)
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_rc_state',
      // Small pages: thread parents, placeholders and the truncated tail cross page boundaries.
      source: { connector: 'rocketchat', path, pageSize: 4, ...settings },
      policies,
    }))
  })

  it('migrates every user, group, member and message item by item; every bad document is rejected with its id and field', async () => {
    const started = Date.now()
    const res = await runCli(['run', '--config', cfg]).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)

    const expected = expectMigration(expectedRocketChat(seed, settings), policies, started)
    // The expectation holds the fixture's gotchas.
    expect(expected.items.messages.size).toBeGreaterThan(12)
    expect(expected.rejects.size).toBe(14)
    const actual = await sandboxContents(box.tsb.sandbox, app.id)
    expect(compareWithExpected(expected.items, actual)).toEqual([])
    checkRejects(expected, await rejectsOf(cfg))

    // Spot checks straight from the fixture's documents, not through the mapping.
    const byKey = (e: 'users' | 'groups' | 'messages', k: string) => actual[e].find((r) => r.key === k)?.row
    expect(byKey('users', pid(RC.erin))).toMatchObject({ name: 'erin' })
    expect(Number(byKey('users', pid(RC.dave))?.deactivated_at)).toBe(Math.floor(at(-10).getTime() / 1000))
    expect(byKey('groups', pid(RC.gdm))).toMatchObject({ name: 'alice, bob, carol', type: 'private' })
    expect(byKey('groups', pid(RC.lunch))).toMatchObject({ name: 'Lunch plans', type: 'private' })
    expect(byKey('groups', pid(DM_ALICE_BOB))).toBeUndefined()
    expect(byKey('groups', pid(RC.live))).toBeUndefined()
    expect(byKey('messages', muid('m12dmXXXXXXXXXXXX'))).toMatchObject({ sender: pid(RC.alice), receiver_type: 'user', receiver: pid(RC.bob) })
    expect(byKey('messages', muid('m15selfXXXXXXXXXX'))).toMatchObject({ sender: pid(RC.carol), receiver: pid(DM_SELF_CAROL) })
    expect(byKey('messages', muid('m16olddmXXXXXXXXX'))).toMatchObject({ sender: pid(RC.dave), receiver: pid(RC.bob) })
    expect(byKey('messages', muid('hist04XXXXXXXXXXX'))).toBeUndefined()
    expect(byKey('messages', muid('m19liveXXXXXXXXXX'))).toBeUndefined()
    expect((byKey('messages', muid('m04editedXXXXXXXX'))?.data as { text: string }).text).toContain('Fixed typo')
    const file = (byKey('messages', muid('m10fileXXXXXXXXXX'))?.data as { attachments?: { url: string }[] }).attachments
    expect(file?.map((a) => a.url)).toEqual([`${settings.uploadsBaseUrl ?? 'http://localhost:3000'}/file-upload/fDiagramXXXXXXXXX/diagram.png`])
    if (policies.deletes === undefined) {
      expect(byKey('messages', muid('m06rmXXXXXXXXXXXX'))).toBeUndefined()
      expect(byKey('messages', muid('m01joinXXXXXXXXXX'))).toBeUndefined()
    } else {
      expect(byKey('messages', muid('m06rmXXXXXXXXXXXX'))).toBeDefined()
      expect(byKey('messages', muid('m08discXXXXXXXXXX'))).toBeDefined()
    }

    // A second run changes nothing: the same contents, nothing sent again.
    await expectRerunSendsNothing(box.tsb, app.id, cfg)
  }, 180_000)

  it('--delta over a later dump of the same server loads exactly the new user, membership, messages and placeholder; an edit of a loaded message is one chat write', async () => {
    const now = Date.now()
    const d = (ms: number) => new Date(ms)
    // The later dump is whole: no truncated tail.
    const later: RocketChatSeed = { ...structuredClone(seed), messagesTail: undefined }
    const [alice] = seed.users.filter((u) => u._id === RC.alice) as [RcDoc]
    const zed = 'uZedZZZZZZZZZZZZZ'
    later.users.push({
      ...alice,
      _id: zed,
      username: 'zed',
      name: 'Zed Zulu',
      emails: [{ address: 'zed@example.com', verified: true }],
      createdAt: d(now - 60_000),
      _updatedAt: d(now),
    })
    later.subscriptions.push({
      _id: 'sNewZedXXXXXXXXXX',
      rid: RC.general,
      u: { _id: zed, username: 'zed' },
      t: 'c',
      name: 'general',
      // Joined before the run starts: a join time in the future is clamped to the run's clock.
      ts: d(now - 30_000),
      _updatedAt: d(now),
    })
    const base = { mentions: [], channels: [], _updatedAt: d(now) }
    later.messages.push(
      { ...base, _id: 'm40newXXXXXXXXXXX', rid: RC.general, u: { _id: zed, username: 'zed' }, ts: at(100), msg: 'Hi all' },
      {
        ...base,
        _id: 'm41replyXXXXXXXXX',
        rid: RC.general,
        u: { _id: RC.alice, username: 'alice' },
        ts: at(101),
        msg: 'Welcome @zed!',
        tmid: 'm02helloXXXXXXXXX',
        mentions: [{ _id: zed, username: 'zed', type: 'user' }],
      },
      { ...base, _id: 'm42dmXXXXXXXXXXXX', rid: DM_ALICE_BOB, u: { _id: RC.bob, username: 'bob' }, ts: at(102), msg: 'Still there?' },
      { ...base, _id: 'm43ghostXXXXXXXXX', rid: RC.general, u: { _id: 'uPhantomXXXXXXXXX', username: 'phantom' }, ts: at(103), msg: 'Boo' },
    )
    // An already loaded message edited in Rocket.Chat after the first dump: edited in place.
    const edited = later.messages.find((m) => m._id === 'm03replyXXXXXXXXX') as RcDoc
    Object.assign(edited, { msg: 'Hi Alice, edited', editedAt: d(now), editedBy: { _id: RC.bob, username: 'bob' }, _updatedAt: d(now) })
    writeRocketChatDump(later, dirname(path))

    const before = await sandboxContents(box.tsb.sandbox, app.id)
    await box.tsb.sandbox.whenIdle()
    const requestsBefore = (await box.tsb.sandbox.requests(app.id)).length
    const res = await runCli(['run', '--config', cfg, '--delta']).done
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    expect(res.stdout).toMatch(/^messages\s+\d+ rows → 4 new, 0 updated, \d+ unchanged, 1 changed after loading,/m)

    const after = await sandboxContents(box.tsb.sandbox, app.id)
    const expected = expectMigration(expectedRocketChat(later, settings), policies, now)
    expect(statedValue(expected.items.messages.get(muid('m03replyXXXXXXXXX')), 'data.text')).toContain('edited')
    expect(compareWithExpected(expected.items, after)).toEqual([])
    // The first dump's truncated tail stays rejected in the job's ledger.
    expected.rejects.set('messages ?', { entity: 'messages', legacyId: '?', field: 'bson' })
    checkRejects(expected, await rejectsOf(cfg))

    const keysOf = (c: typeof after) => new Set(Object.entries(c).flatMap(([e, rows]) => rows.map((r) => `${e} ${r.key}`)))
    const old = keysOf(before)
    const ghost = placeholderUid('uPhantomXXXXXXXXX', PoliciesSchema.parse(policies).missingUsers.uidPrefix)
    expect([...keysOf(after)].filter((k) => !old.has(k)).sort()).toEqual(
      [
        `members ${pid(RC.general)}_member_${pid(zed)}`,
        `messages ${muid('m40newXXXXXXXXXXX')}`,
        `messages ${muid('m41replyXXXXXXXXX')}`,
        `messages ${muid('m42dmXXXXXXXXXXXX')}`,
        `messages ${muid('m43ghostXXXXXXXXX')}`,
        `users ${ghost}`,
        `users ${pid(zed)}`,
      ].sort(),
    )
    // Exactly those items went over the wire, once each, and one chat write: the edit.
    expect(await sentSince(box.tsb, app.id, requestsBefore)).toEqual({ imported: 7, chatWrites: ['messages.update 200 1'] })
    const reply = after.messages.find((m) => m.key === muid('m41replyXXXXXXXXX'))?.row.data as { text: string }
    expect(reply.text).toContain(`<@uid:${pid(zed)}>`)
  }, 180_000)
})
