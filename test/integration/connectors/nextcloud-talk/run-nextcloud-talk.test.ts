/**
 * End to end, as a user runs it: the Nextcloud Talk fixture (Postgres with `oc_`, MariaDB with
 * `nc_`) → `chatferry run` (a process) → the sandbox, compared item by item with what the fixture's
 * rows and the policies say should be there (expected canonical records → the documented rules,
 * test/helpers/expected-items.ts, without the connector, mappings, ledger or loader); every bad row is in `chatferry rejects`; a
 * second run sends nothing; a `--delta` run after new rows and an edit (Talk 19: new text,
 * `meta_data`, a `message_edited` system message) loads exactly the new rows and applies the edit
 * with one chat write — all counted from the sandbox's request log.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import type { PoliciesInput } from '../../../../mappings/index.ts'
import { expectedNextcloud, type NextcloudExpectOptions } from '../../../fixtures/nextcloud-talk/expected.ts'
import {
  dt,
  type FixtureEngine,
  loadNextcloudFixture,
  type NextcloudSeed,
  openFixtureWriter,
  ROOM,
  type Row,
  secs,
} from '../../../fixtures/nextcloud-talk/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'
import { compareWithExpected, expectMigration, sandboxContents, statedValue } from '../../../helpers/run-e2e.ts'
import { checkRejects, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

interface Case {
  readonly engine: FixtureEngine
  readonly prefix: string
  readonly policies: PoliciesInput
  /** Connector settings besides url and tablePrefix, mirrored in the expectation. */
  readonly source: Record<string, unknown>
  readonly expect: NextcloudExpectOptions
}

const SITE = 'https://cloud.example.com'
const CASES: Case[] = [
  { engine: 'postgres', prefix: 'oc_', policies: { retention: { oldMessages: 'send' } }, source: {}, expect: {} },
  {
    engine: 'mysql',
    prefix: 'nc_',
    source: { siteUrl: SITE, rooms: { changelog: 'group', noteToSelf: 'self' } },
    expect: { siteUrl: SITE, rooms: { changelog: 'group', noteToSelf: 'self' } },
    policies: {
      retention: { oldMessages: 'send' },
      deletes: { mode: 'tombstone' },
      systemMessages: { mode: 'as-user' },
      threads: { quoteParent: 4 },
    },
  },
]

const box = useFileSandbox()

describe.each(CASES)('chatferry run: the Nextcloud Talk fixture on $engine (prefix $prefix) → sandbox', (c) => {
  const noServer = c.engine === 'mysql' && mysqlServerUrl() === undefined
  let source: TestDatabase
  let app: TestApp
  let seed: NextcloudSeed
  let cfg: string

  beforeAll(async () => {
    if (noServer) {
      return
    }
    source = c.engine === 'postgres' ? await createTestDatabase('cf_nc_src') : await createMysqlTestDatabase('cf_nc_src')
    box.cleanups.push(() => dropWithin(source))
    seed = await loadNextcloudFixture(c.engine, source.url, { prefix: c.prefix })
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_nc_state',
      // Small pages: reply parents, reactions and placeholders cross page boundaries.
      source: { connector: 'nextcloud-talk', url: source.url, tablePrefix: c.prefix, pageSize: 4, ...c.source },
      policies: c.policies,
    }))
  })

  it.skipIf(noServer)(
    'migrates every user, group, member and message item by item; every bad row is rejected with its id and field; a second run sends nothing',
    async () => {
      const started = Date.now()
      const res = await runCli(['run', '--config', cfg]).done
      expect(res.code, res.stderr.slice(-3000)).toBe(3)

      const expected = expectMigration(expectedNextcloud(seed, c.expect), c.policies, started)
      expect(expected.items.messages.size).toBeGreaterThan(10)
      expect(expected.rejects.size).toBe(8)
      const actual = await sandboxContents(box.tsb.sandbox, app.id)
      expect(compareWithExpected(expected.items, actual)).toEqual([])
      checkRejects(expected, await rejectsOf(cfg))

      // Spot checks straight from the fixture's rows, without the mapping.
      const row = (e: 'users' | 'groups' | 'messages', k: string) => actual[e].find((r) => r.key === k)?.row
      expect(row('users', 'bob')).toMatchObject({ name: 'Bob Builder' })
      expect(row('users', 'carol')).toMatchObject({ name: 'carol' })
      expect(Number(row('users', 'dave')?.deactivated_at)).toBe(secs(-3000))
      expect(row('groups', String(ROOM.townhall))).toMatchObject({ name: 'Town hall', type: 'public' })
      expect(row('groups', String(ROOM.team))).toMatchObject({ name: 'Team', type: 'private', owner: 'alice' })
      expect(row('groups', String(ROOM.dmAliceBob))).toBeUndefined()
      expect(row('groups', String(ROOM.changelog)) !== undefined).toBe(c.engine === 'mysql')
      expect(row('messages', '20')).toMatchObject({ sender: 'alice', receiver_type: 'user', receiver: 'bob' })
      expect(row('messages', '21')).toMatchObject({ sender: 'bob', receiver: 'alice' })
      expect(row('messages', '29')).toBeUndefined()
      expect(row('messages', '12')).toBeUndefined()
      expect((row('messages', '7')?.data as { text: string }).text).toBe('Edited text')
      expect(row('messages', '25') !== undefined).toBe(c.engine === 'mysql')
      if (c.engine === 'mysql') {
        expect(row('messages', '25')).toMatchObject({ sender: 'carol', receiver_type: 'user', receiver: 'carol' })
        expect((row('messages', '15')?.data as { attachments: { url: string }[] }).attachments[0]?.url).toBe(`${SITE}/f/991`)
      } else {
        expect(row('messages', '9')).toBeUndefined()
        expect(row('messages', '1')).toBeUndefined()
      }

      await box.tsb.sandbox.whenIdle()
      const before = (await box.tsb.sandbox.requests(app.id)).length
      const again = await runCli(['run', '--config', cfg]).done
      expect(again.code, again.stderr.slice(-3000)).toBe(3)
      expect(again.stdout).toMatch(/read completed by an earlier run/)
      await box.tsb.sandbox.whenIdle()
      expect((await box.tsb.sandbox.requests(app.id)).length).toBe(before)
    },
    180_000,
  )

  it.skipIf(noServer)(
    '--delta after new rows and a Talk edit loads exactly the new items and applies the edit with one chat write',
    async () => {
      const now = Date.now()
      const nowDt = dt(0, now)
      const added: NextcloudSeed = {
        users: [{ uid: 'zed2', displayname: 'Zed Zulu', password: '', uid_lower: 'zed2' }],
        talk_attendees: [{ id: 100, room_id: ROOM.team, actor_type: 'users', actor_id: 'zed2', display_name: 'Zed Zulu', participant_type: 3 }],
        comments: [
          {
            id: 100,
            parent_id: 0,
            topmost_parent_id: 0,
            actor_type: 'users',
            actor_id: 'zed2',
            message: 'Hi all, @alice told me to join',
            verb: 'comment',
            creation_timestamp: nowDt,
            object_type: 'chat',
            object_id: String(ROOM.team),
          },
          {
            id: 101,
            parent_id: 100,
            topmost_parent_id: 100,
            actor_type: 'users',
            actor_id: 'alice',
            message: 'Welcome @zed2!',
            verb: 'comment',
            creation_timestamp: nowDt,
            object_type: 'chat',
            object_id: String(ROOM.team),
          },
          {
            id: 102,
            parent_id: 0,
            topmost_parent_id: 0,
            actor_type: 'users',
            actor_id: 'bob',
            message: 'Still there?',
            verb: 'comment',
            creation_timestamp: nowDt,
            object_type: 'chat',
            object_id: String(ROOM.dmAliceBob),
          },
          // The edit of an already loaded comment: Talk's system message names it.
          {
            id: 103,
            parent_id: 5,
            topmost_parent_id: 0,
            actor_type: 'users',
            actor_id: 'carol',
            message: JSON.stringify({ message: 'message_edited', parameters: { message: 5 } }),
            verb: 'system',
            creation_timestamp: nowDt,
            object_type: 'chat',
            object_id: String(ROOM.team),
          },
        ],
      }
      const editMeta = JSON.stringify({ last_edited_by_type: 'users', last_edited_by_id: 'carol', last_edited_time: Math.floor(now / 1000) })
      const w = await openFixtureWriter(c.engine, source.url, c.prefix)
      try {
        for (const table of ['users', 'talk_attendees', 'comments'] as const) {
          await w.insert(table, added[table] ?? [])
        }
        const q = (n: string) => (c.engine === 'postgres' ? `"${n}"` : `\`${n}\``)
        const ph = (i: number) => (c.engine === 'postgres' ? `$${i}` : '?')
        await w.exec(`UPDATE ${q(`${c.prefix}comments`)} SET ${q('message')} = ${ph(1)}, ${q('meta_data')} = ${ph(2)} WHERE ${q('id')} = 5`, [
          'Same second one, edited',
          editMeta,
        ])
      } finally {
        await w.close()
      }
      const merged: NextcloudSeed = { ...seed }
      for (const [table, rows] of Object.entries(added)) {
        merged[table] = [...(seed[table] ?? []), ...rows]
      }
      merged.comments = (merged.comments ?? []).map((r: Row) => (r.id === 5 ? { ...r, message: 'Same second one, edited', meta_data: editMeta } : r))

      const before = await sandboxContents(box.tsb.sandbox, app.id)
      await box.tsb.sandbox.whenIdle()
      const requestsBefore = (await box.tsb.sandbox.requests(app.id)).length
      const res = await runCli(['run', '--config', cfg, '--delta']).done
      expect(res.code, res.stderr.slice(-3000)).toBe(3)

      const expected = expectMigration(expectedNextcloud(merged, c.expect), c.policies, now)
      expect(statedValue(expected.items.messages.get('5'), 'data.text')).toContain('edited')
      const after = await sandboxContents(box.tsb.sandbox, app.id)
      expect(compareWithExpected(expected.items, after)).toEqual([])
      checkRejects(expected, await rejectsOf(cfg))

      const keysOf = (x: typeof after) => new Set(Object.entries(x).flatMap(([e, rows]) => rows.map((r) => `${e} ${r.key}`)))
      const old = keysOf(before)
      const fresh = [...keysOf(after)].filter((k) => !old.has(k)).sort()
      const wantFresh = [
        'members 2_member_zed2',
        'messages 100',
        'messages 101',
        'messages 102',
        'users zed2',
        ...(c.engine === 'mysql' ? ['messages 103'] : []),
      ]
      expect(fresh).toEqual(wantFresh.sort())
      await box.tsb.sandbox.whenIdle()
      const sent = (await box.tsb.sandbox.requests(app.id)).slice(requestsBefore)
      const imports = sent.filter((r) => ['users', 'groups', 'members', 'messages'].includes(r.endpoint))
      expect(imports.filter((r) => r.status === 200).reduce((n, r) => n + (r.itemCount ?? 0), 0)).toBe(wantFresh.length)
      const writes = sent.filter((r) => r.endpoint.includes('.')).map((r) => `${r.endpoint} ${r.status} ${(r.items ?? []).length}`)
      expect(writes).toEqual(['messages.update 200 1'])
      const welcome = after.messages.find((m) => m.key === '101')?.row.data as { text: string }
      expect(welcome.text).toContain('<@uid:zed2>')
    },
    180_000,
  )
})
