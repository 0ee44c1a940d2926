/**
 * End to end over Nextcloud Talk tables filled the way Talk and Nextcloud server write them
 * (test/fixtures/nextcloud-talk/grounded.ts, Postgres and MariaDB): `chatferry run` (a process) →
 * the sandbox, then each planted row is checked against what the READMEs say must come of it,
 * written out by hand in the fixture: comments whose `meta_data` is PHP's `[]` are migrated, the
 * whole history of a former one-to-one room (type 5, renamed after the deleted user) is migrated
 * between the remaining user and a placeholder for the deleted one, a file caption's mention
 * resolves in a page of its own, and e-mails reach `metadata.email`.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { groundedNextcloudSeed, NC_GROUNDED_EXPECT } from '../../../fixtures/nextcloud-talk/grounded.ts'
import { type FixtureEngine, loadNextcloudFixture } from '../../../fixtures/nextcloud-talk/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'
import { type SandboxContents, sandboxContents } from '../../../helpers/run-e2e.ts'
import { useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()

describe.each<FixtureEngine>(['postgres', 'mysql'])('chatferry run: Nextcloud Talk tables as Talk writes them, on %s', (engine) => {
  const noServer = engine === 'mysql' && mysqlServerUrl() === undefined
  let got: SandboxContents
  let rejects = ''

  beforeAll(async () => {
    if (noServer) {
      return
    }
    const source: TestDatabase = engine === 'postgres' ? await createTestDatabase('cf_ncg_src') : await createMysqlTestDatabase('cf_ncg_src')
    box.cleanups.push(() => dropWithin(source))
    await loadNextcloudFixture(engine, source.url, { seed: groundedNextcloudSeed() })
    const { app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_ncg_state',
      // One comment per page: a caption's mention must resolve without another comment's help.
      source: { connector: 'nextcloud-talk', url: source.url, pageSize: 1, siteUrl: 'https://cloud.example.com' },
      policies: { retention: { oldMessages: 'send' } },
    })
    const res = await runCli(['run', '--config', cfg]).done
    rejects = (await runCli(['rejects', '--config', cfg]).done).stdout
    expect(res.code, `${res.stderr.slice(-2000)}\n${rejects}`).toBe(0)
    got = await sandboxContents(box.tsb.sandbox, app.id)
  }, 90_000)

  const msg = (id: string) => got.messages.find((m) => m.key === id)?.row
  const text = (id: string) => (msg(id)?.data as { text?: string } | undefined)?.text

  it.skipIf(noServer)('every comment is migrated with its text; none is rejected for meta_data [] or its room', () => {
    for (const [id, want] of Object.entries(NC_GROUNDED_EXPECT.texts)) {
      expect(text(id), id).toBe(want)
    }
  })

  it.skipIf(noServer)('the former one-to-one room: the remaining user and a placeholder for the deleted one, both ways', () => {
    const departed = got.users.find((u) => u.row.name === `Unknown user ${NC_GROUNDED_EXPECT.departed}`)
    expect(departed, JSON.stringify(got.users.map((u) => u.row.name))).toBeDefined()
    expect(msg('111')).toMatchObject({ sender: departed?.key, receiver: 'bob', receiver_type: 'user' })
    expect(msg('112')).toMatchObject({ sender: 'bob', receiver: departed?.key, receiver_type: 'user' })
  })

  it.skipIf(noServer)("users' e-mails reach metadata.email, from the account data or the settings preference", () => {
    for (const u of got.users.filter((x) => ['alice', 'bob', 'carol'].includes(x.key))) {
      expect((u.row.metadata as { email?: string } | null)?.email, u.key).toBe(NC_GROUNDED_EXPECT.emails[u.key])
    }
  })
})
