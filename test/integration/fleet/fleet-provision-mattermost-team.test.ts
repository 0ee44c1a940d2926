/**
 * The Mattermost connector's `team:` (a fleet's tenant per team), on the Mattermost fixture in
 * Postgres and MariaDB with team memberships added: each team reads exactly its channels (open/private of the
 * team; group and direct channels whose members are all the team's people), their members and
 * posts, and the users of those — computed here from the fixture's rows, not from the connector. A
 * team the database lacks is refused before any read.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import { type LegacyEntity, legacyIdOf } from '../../../src/model/records.ts'
import { loadMattermostFixture, type MattermostSeed, MM, openFixtureWriter, type Row } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { createMysqlTestDatabase } from '../../helpers/mysql.ts'

/** Team memberships added to the fixture (which has none): eng = alice, bob, carol; ops = bob. */
const TEAM_PEOPLE: Record<string, { teamId: string; users: string[] }> = {
  eng: { teamId: MM.teamEng, users: [MM.alice, MM.bob, MM.carol] },
  ops: { teamId: MM.teamOps, users: [MM.bob] },
}

for (const engine of ['postgres', 'mysql'] as const) {
  const skip = engine === 'mysql' && inject('mysqlUrl') === undefined
  describe.skipIf(skip)(`Mattermost team: one tenant per team, on ${engine === 'mysql' ? 'MariaDB' : engine}`, () => {
    let db: TestDatabase
    let seed: MattermostSeed

    beforeAll(async () => {
      db = engine === 'postgres' ? await createTestDatabase('cf_fleet_mmteam') : await createMysqlTestDatabase('cf_fleet_mmteam')
      seed = await loadMattermostFixture(engine, db.url)
      const writer = await openFixtureWriter(engine, db.url)
      for (const { teamId, users } of Object.values(TEAM_PEOPLE)) {
        await writer.insert(
          'teammembers',
          users.map((u) => ({ teamid: teamId, userid: u, roles: 'team_user', deleteat: 0 })),
        )
      }
      await writer.close()
    }, 120_000)

    afterAll(async () => {
      await db?.drop()
    })

    const str = (v: unknown) => String(v ?? '')

    /** What a team should read, from the fixture's rows and the rule (see the connector's team-scope.ts). */
    function expected(team: string): Record<LegacyEntity, Set<string>> {
      const { teamId, users: people } = TEAM_PEOPLE[team] as { teamId: string; users: string[] }
      const members = (channel: string) => (seed.channelmembers as Row[]).filter((m) => m.channelid === channel).map((m) => str(m.userid))
      const channels = (seed.channels as Row[]).filter((c) => {
        if (c.type === 'O' || c.type === 'P') {
          return c.teamid === teamId
        }
        const ms = members(str(c.id))
        return ms.length > 0 && ms.every((u) => people.includes(u))
      })
      const ids = new Set(channels.map((c) => str(c.id)))
      const posts = (seed.posts as Row[]).filter((p) => ids.has(str(p.channelid)) && !p.originalid)
      const users = new Set([
        ...people,
        ...(seed.channelmembers as Row[]).filter((m) => ids.has(str(m.channelid))).map((m) => str(m.userid)),
        ...posts.map((p) => str(p.userid)),
      ])
      return {
        users: new Set([...users].filter((u) => (seed.users as Row[]).some((r) => r.id === u))),
        groups: new Set(channels.filter((c) => c.type !== 'D').map((c) => str(c.id))),
        members: new Set(
          (seed.channelmembers as Row[])
            .filter((m) => ids.has(str(m.channelid)) && channels.find((c) => c.id === m.channelid)?.type !== 'D')
            .map((m) => `${str(m.channelid)}/${str(m.userid)}`),
        ),
        messages: new Set(posts.map((p) => str(p.id))),
      }
    }

    async function readIds(team: string | undefined, entity: LegacyEntity): Promise<Set<string>> {
      const config = SourceConfigSchema.parse({ connector: 'mattermost', url: db.url, pageSize: 3, ...(team ? { team } : {}) })
      const session = await createConnector(config).open()
      const out = new Set<string>()
      try {
        for await (const page of session.read(entity)) {
          for (const row of page.rows) {
            out.add(row.ok ? legacyIdOf(entity, row.record) : row.legacyId)
          }
        }
      } finally {
        await session.close()
      }
      return out
    }

    it.each(['eng', 'ops'])('team %s reads exactly its users, channels, members and posts', async (team) => {
      const want = expected(team)
      for (const entity of ['users', 'groups', 'members', 'messages'] as const) {
        expect([...(await readIds(team, entity))].sort(), `${team} ${entity}`).toEqual([...want[entity]].sort())
      }
    })

    it('the teams differ, and the group DM of alice, bob and carol belongs to eng only', async () => {
      expect((await readIds('eng', 'groups')).has(MM.gm)).toBe(true)
      expect((await readIds('ops', 'groups')).has(MM.gm)).toBe(false)
      expect((await readIds('ops', 'groups')).has(MM.archived)).toBe(true)
      expect((await readIds('eng', 'groups')).has(MM.archived)).toBe(false)
      // Without team: the whole database (more than either team).
      const all = await readIds(undefined, 'groups')
      expect(all.size).toBeGreaterThan((await readIds('eng', 'groups')).size)
    })

    it('counts agree with the read', async () => {
      const config = SourceConfigSchema.parse({ connector: 'mattermost', url: db.url, team: 'eng' })
      const session = await createConnector(config).open()
      try {
        expect(await session.count('messages')).toBe(expected('eng').messages.size)
      } finally {
        await session.close()
      }
    })

    it('a team the database does not have is refused (SOURCE_INVALID) before any read', async () => {
      const config = SourceConfigSchema.parse({ connector: 'mattermost', url: db.url, team: 'nosuchteam' })
      await expect(createConnector(config).open()).rejects.toMatchObject({
        code: 'SOURCE_INVALID',
        message: expect.stringContaining('no team named nosuchteam'),
      })
    })
  })
}
