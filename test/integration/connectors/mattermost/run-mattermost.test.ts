/**
 * End to end, as a user runs it: the Mattermost fixture database (Postgres and MariaDB) →
 * `chatferry run` (a process) → the sandbox. Then the sandbox's contents are compared item by item
 * with what the fixture's rows and the policies say should be there (expected canonical records →
 * the documented rules, test/helpers/expected-items.ts, without the connector, mappings, ledger or loader), every
 * bad row must be in `chatferry rejects --json`, and a `--delta` run after new rows were added to
 * the source must load exactly those new rows and apply the edit of a loaded post with one chat write.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { placeholderUid, type PoliciesInput, PoliciesSchema } from '../../../../mappings/index.ts'
import { expectedMattermost } from '../../../fixtures/mattermost/expected.ts'
import {
  loadMattermostFixture,
  type MattermostEngine,
  type MattermostSeed,
  MINUTE,
  MM,
  openFixtureWriter,
  type Row,
  T0,
} from '../../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'
import { expectRerunSendsNothing, sentSince } from '../../../helpers/run-checks.ts'
import { compareWithExpected, expectMigration, sandboxContents, statedValue } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

/** The fixture is from January 2024: older than the platform's default window, so the app has extended retention. */

interface Case {
  readonly engine: MattermostEngine
  /** Policies of the run; the Postgres case keeps every default that matters, MariaDB switches several. */
  readonly policies: PoliciesInput
  /** Connector settings besides the url, mirrored in the expectation. */
  readonly source?: { groupName?: string; fileBaseUrl?: string }
}

const CASES: Case[] = [
  { engine: 'postgres', policies: { retention: { oldMessages: 'send' } } },
  {
    engine: 'mysql',
    source: { groupName: '{team}-{channel}', fileBaseUrl: 'https://files.example.com/mm-data' },
    policies: {
      retention: { oldMessages: 'send' },
      deletes: { mode: 'tombstone' },
      systemMessages: { mode: 'as-user' },
      threads: { quoteParent: 4 },
    },
  },
]

const box = useFileSandbox()

describe.each(CASES)('chatferry run: the Mattermost fixture on $engine → sandbox', ({ engine, policies, source: connectorSettings = {} }) => {
  const noServer = engine === 'mysql' && mysqlServerUrl() === undefined
  let source: TestDatabase
  let app: TestApp
  let seed: MattermostSeed
  let cfg: string

  beforeAll(async () => {
    if (noServer) {
      return
    }
    source = engine === 'postgres' ? await createTestDatabase('cf_mm_src') : await createMysqlTestDatabase('cf_mm_src')
    box.cleanups.push(() => dropWithin(source))
    seed = await loadMattermostFixture(engine, source.url)
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_mm_state',
      // Small pages: thread parents and placeholders cross page boundaries.
      source: { connector: 'mattermost', url: source.url, pageSize: 4, ...connectorSettings },
      policies,
    }))
  })

  it.skipIf(noServer)(
    `migrates every user, group, member and message item by item; every bad row is rejected with its id and reason${noServer ? ' (skipped: no MariaDB server, inject("mysqlUrl") is undefined)' : ''}`,
    async () => {
      const started = Date.now()
      const res = await runCli(['run', '--config', cfg]).done
      // The fixture has bad rows: the run finishes with rejects.
      expect(res.code, res.stderr.slice(-3000)).toBe(3)
      expect(res.stdout).toMatch(/^messages\s+\d+ rows →/m)

      const expected = expectMigration(expectedMattermost(seed, connectorSettings), policies, started)
      // Sanity of the expectation itself: the fixture's gotchas are in it.
      expect(expected.items.messages.size).toBeGreaterThan(10)
      expect(expected.rejects.size).toBeGreaterThanOrEqual(engine === 'mysql' ? 9 : 7)
      const actual = await sandboxContents(box.tsb.sandbox, app.id)
      expect(compareWithExpected(expected.items, actual)).toEqual([])
      checkRejects(expected, await rejectsOf(cfg))

      // Spot checks that do not go through the mapping at all, straight from the fixture's rows.
      const byKey = (e: 'users' | 'groups' | 'messages', k: string) => actual[e].find((r) => r.key === k)?.row
      expect(byKey('users', MM.alice)).toMatchObject({ name: 'Alice Archer' })
      expect(Number(byKey('users', MM.dave)?.deactivated_at)).toBe(Math.floor((T0 - 10 * MINUTE) / 1000))
      expect(byKey('groups', MM.gm)).toMatchObject({ name: 'alice, bob, carol', type: 'private' })
      expect(byKey('groups', MM.town)).toMatchObject({ name: engine === 'mysql' ? 'eng-Town Square' : 'Town Square' })
      expect(byKey('groups', MM.dmAliceBob)).toBeUndefined()
      expect(byKey('messages', 'p08dm')).toMatchObject({ sender: MM.alice, receiver_type: 'user', receiver: MM.bob })
      expect(byKey('messages', 'p10self')).toMatchObject({ sender: MM.carol, receiver: MM.carol })
      expect(byKey('messages', 'p05history')).toBeUndefined()
      expect((byKey('messages', 'p05edited')?.data as { text: string }).text).toBe('Edited text')
      if (engine === 'postgres') {
        expect(byKey('messages', 'p06deleted')).toBeUndefined()
        expect(byKey('messages', 'p07system')).toBeUndefined()
      } else {
        expect((byKey('messages', 'p06deleted')?.data as { text: string }).text).toBe('This message was deleted.')
        expect(byKey('messages', 'p07system')).toMatchObject({ sender: 'system' })
      }

      // A second run changes nothing: the same contents, nothing sent again.
      await expectRerunSendsNothing(box.tsb, app.id, cfg)
      expect(compareWithExpected(expected.items, await sandboxContents(box.tsb.sandbox, app.id))).toEqual([])
    },
    90_000,
  )

  it.skipIf(noServer)(
    `--delta after new rows were added loads exactly the new user, membership, posts and placeholder; an edit after loading is applied with one chat write${noServer ? ' (skipped: no MariaDB server)' : ''}`,
    async () => {
      const now = Date.now()
      const [alice] = seed.users as [Row]
      const zed = 'u11zed'
      const post = (id: string, o: Row): Row => ({ ...(seed.posts?.find((p) => p.id === 'p03tie') as Row), id, updateat: now, ...o })
      const added: MattermostSeed = {
        users: [
          {
            ...alice,
            id: zed,
            username: 'zed',
            email: 'zed@example.com',
            firstname: 'Zed',
            lastname: 'Zulu',
            roles: 'system_user',
            position: '',
            createat: now - MINUTE,
            updateat: now,
          },
        ],
        channelmembers: [{ ...(seed.channelmembers?.[1] as Row), channelid: MM.town, userid: zed, lastupdateat: now }],
        posts: [
          post('p30new', { createat: T0 + 100 * MINUTE, userid: zed, message: 'Hi all, @alice told me to join' }),
          post('p31newreply', { createat: T0 + 101 * MINUTE, userid: MM.alice, rootid: 'p01hello', message: 'Welcome @zed!' }),
          post('p32newdm', { createat: T0 + 102 * MINUTE, userid: MM.bob, channelid: MM.dmAliceBob, message: 'Still there?' }),
          // From a user the source does not have: a placeholder user comes with it.
          post('p33ghost', { createat: T0 + 103 * MINUTE, userid: 'u99ghost', message: 'Boo' }),
        ],
      }
      // An already loaded post edited in the source: never imported again, edited through the chat interface (the update lane).
      const edited = { ...(seed.posts?.find((p) => p.id === 'p03tie') as Row), message: 'Same millisecond, edited', editat: now, updateat: now }
      const w = await openFixtureWriter(engine, source.url)
      try {
        for (const table of ['users', 'channelmembers', 'posts'] as const) {
          await w.insert(table, added[table] ?? [])
        }
        await w.exec(
          engine === 'postgres'
            ? `UPDATE posts SET message = '${edited.message}', editat = ${now}, updateat = ${now} WHERE id = 'p03tie'`
            : `UPDATE Posts SET Message = '${edited.message}', EditAt = ${now}, UpdateAt = ${now} WHERE Id = 'p03tie'`,
        )
      } finally {
        await w.close()
      }
      const merged: MattermostSeed = { ...seed }
      for (const [table, rows] of Object.entries(added)) {
        merged[table] = [...(seed[table] ?? []), ...rows]
      }
      merged.posts = (merged.posts ?? []).map((p) => (p.id === 'p03tie' ? edited : p))

      const before = await sandboxContents(box.tsb.sandbox, app.id)
      await box.tsb.sandbox.whenIdle()
      const requestsBefore = (await box.tsb.sandbox.requests(app.id)).length
      const res = await runCli(['run', '--config', cfg, '--delta']).done
      // The job's earlier rejects are still there, so the run still ends with 3.
      expect(res.code, res.stderr.slice(-3000)).toBe(3)

      expect(res.stdout).toMatch(/^messages\s+\d+ rows → 4 new, 0 updated, \d+ unchanged, 1 changed after loading,/m)
      const after = await sandboxContents(box.tsb.sandbox, app.id)
      const expected = expectMigration(expectedMattermost(merged, connectorSettings), policies, now)
      // The edit after loading is on the platform too (the update lane's PUT /messages/{id}).
      expect(statedValue(expected.items.messages.get('p03tie'), 'data.text')).toContain('edited')
      expect(compareWithExpected(expected.items, after)).toEqual([])
      checkRejects(expected, await rejectsOf(cfg))

      const keysOf = (c: typeof after) => new Set(Object.entries(c).flatMap(([e, rows]) => rows.map((r) => `${e} ${r.key}`)))
      const old = keysOf(before)
      const fresh = [...keysOf(after)].filter((k) => !old.has(k)).sort()
      const ghost = placeholderUid('u99ghost', PoliciesSchema.parse(policies).missingUsers.uidPrefix)
      expect(fresh).toEqual(
        [
          `members ${MM.town}_member_${zed}`,
          'messages p30new',
          'messages p31newreply',
          'messages p32newdm',
          'messages p33ghost',
          `users ${ghost}`,
          `users ${zed}`,
        ].sort(),
      )
      // Exactly those items went over the wire, once each, and one chat write: the edit.
      expect(await sentSince(box.tsb, app.id, requestsBefore)).toEqual({ imported: 7, chatWrites: ['messages.update 200 1'] })
      expect(after.messages.find((m) => m.key === 'p33ghost')?.row.sender).toBe(ghost)
      // The mention of the new user resolved to its uid in the same delta.
      const reply = after.messages.find((m) => m.key === 'p31newreply')?.row.data as { text: string }
      expect(reply.text).toContain(`<@uid:${zed}>`)
    },
    90_000,
  )
})
