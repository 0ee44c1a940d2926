/**
 * End to end over a Mattermost database filled the way Mattermost and its integrations write it
 * (test/fixtures/mattermost/grounded.ts, Postgres and MariaDB): `chatferry run` (a process) → the
 * sandbox, then each planted row is checked against what the READMEs say must come of it, written
 * out by hand in the fixture: integration posts with an empty `message` arrive as their
 * attachments' text, reactions whose `deleteat` is NULL are kept, `@name:remote` mentions resolve,
 * each team's "Town Square" is its own name, and e-mails reach `metadata.email`.
 */
import { beforeAll, describe, expect, it } from 'vitest'

import { G, GROUNDED_EXPECT, groundedMattermostSeed } from '../../../fixtures/mattermost/grounded.ts'
import { loadMattermostFixture, type MattermostEngine } from '../../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { fixtureRun } from '../../../helpers/fixture-run.ts'
import { runCli } from '../../../helpers/ledger-fixtures.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'
import { type SandboxContents, sandboxContents } from '../../../helpers/run-e2e.ts'
import { type ListedReject, rejectsOf } from '../../../helpers/run-rejects.ts'
import { type TestApp, useFileSandbox } from '../../../helpers/sandbox.ts'

const box = useFileSandbox()

/** `@handle` of a known user → `<@uid:…>` (mappings README, `mentions: rewrite`); uids here are the legacy ids. */
const rewritten = (text: string) =>
  text.replace('@carol:remote1', `<@uid:${G.remote}>`).replace('@alice', `<@uid:${G.alice}>`).replace('@bob', `<@uid:${G.bob}>`)

describe.each<MattermostEngine>(['postgres', 'mysql'])('chatferry run: a Mattermost database as Mattermost writes it, on %s', (engine) => {
  const noServer = engine === 'mysql' && mysqlServerUrl() === undefined
  let app: TestApp
  let cfg: string
  let got: SandboxContents
  let rejects: ListedReject[] = []

  beforeAll(async () => {
    if (noServer) {
      return
    }
    const source: TestDatabase = engine === 'postgres' ? await createTestDatabase('cf_mmg_src') : await createMysqlTestDatabase('cf_mmg_src')
    box.cleanups.push(() => dropWithin(source))
    await loadMattermostFixture(engine, source.url, { seed: groundedMattermostSeed() })
    ;({ app, cfg } = await fixtureRun(box, {
      statePrefix: 'cf_mmg_state',
      source: { connector: 'mattermost', url: source.url, pageSize: 3 },
      policies: { retention: { oldMessages: 'send' } },
    }))
    const res = await runCli(['run', '--config', cfg]).done
    // The damaged channel and its post are rejected: exit 3.
    expect(res.code, res.stderr.slice(-3000)).toBe(3)
    rejects = await rejectsOf(cfg)
    got = await sandboxContents(box.tsb.sandbox, app.id)
  }, 90_000)

  const row = (e: 'users' | 'groups' | 'messages', key: string) => got[e].find((r) => r.key === key)?.row
  const data = (key: string) => row('messages', key)?.data as { text: string; metadata?: Record<string, unknown> } | undefined

  it.skipIf(noServer)('every integration post arrives with its attachments as text, none skipped as empty', () => {
    for (const [id, text] of Object.entries(GROUNDED_EXPECT.texts)) {
      expect(data(id)?.text, id).toBe(rewritten(text))
    }
    // What was not rendered (colour, buttons) stays with the post.
    expect((data('gp03gitlab')?.metadata?.props as { attachments: unknown }).attachments).toEqual([{ actions: [{ id: 'view', name: 'View' }] }])
    expect(got.messages.map((m) => m.key).sort()).toEqual(['gp01jira', 'gp02alert', 'gp03gitlab', 'gp04jenkins', 'gp05shared', 'gp06file', 'gp07ops'])
  })

  it.skipIf(noServer)('a reaction whose deleteat is NULL is kept, a removed one is not; @name:remote resolves', () => {
    // chatferry's own metadata (legacyMetadata.key, default `legacy`) holds the reactions (mappings README).
    expect((data('gp05shared')?.metadata?.legacy as { reactions?: unknown } | undefined)?.reactions).toEqual(GROUNDED_EXPECT.reactions)
    expect(data('gp05shared')?.text).toBe(`thanks <@uid:${GROUNDED_EXPECT.sharedMentions[0]}> and <@uid:${GROUNDED_EXPECT.sharedMentions[1]}>`)
    // A file whose deleteat is NULL is the post's attachment.
    expect((data('gp06file') as { attachments?: { name: string }[] } | undefined)?.attachments?.map((a) => a.name)).toEqual(['build.log'])
  })

  it.skipIf(noServer)('each team\'s "Town Square" is named with its team; a name only one team has is left alone', () => {
    const names = Object.fromEntries(got.groups.map((g) => [g.key, g.row.name]))
    expect(names).toEqual(GROUNDED_EXPECT.groupNames)
  })

  it.skipIf(noServer)("users' e-mails reach metadata.email; users without one have none", () => {
    for (const u of got.users) {
      expect((u.row.metadata as { email?: string } | null)?.email, u.key).toBe(GROUNDED_EXPECT.emails[u.key])
    }
    expect(got.users).toHaveLength(5)
  })

  it.skipIf(noServer)("a post of a rejected channel is rejected naming the channel's own reason, not as to an unknown group", () => {
    const post = rejects.find((r) => r.legacyId === 'gp08lost')
    expect(post?.message).toMatch(/gc99noname.*was rejected \(displayname: /)
    expect(post?.message).not.toMatch(/unknown group/)
    expect(rejects.find((r) => r.legacyId === 'gc99noname')?.message).toMatch(/^displayname: /)
  })
})
