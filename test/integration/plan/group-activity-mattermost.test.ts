/**
 * The Mattermost connector's answer to `groupActivity` (the earliest join and post per channel,
 * for channels whose `createat` is 0), against the fixture's rows, on Postgres and MariaDB.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'

import { createConnector, SourceConfigSchema } from '../../../connectors/index.ts'
import type { GroupActivity, SourceSession } from '../../../src/model/connector.ts'
import { loadMattermostFixture, type MattermostSeed } from '../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { createMysqlTestDatabase } from '../../helpers/mysql.ts'

/** What the fixture's rows say: per non-direct channel, the earliest positive join and post time. */
function expectedActivity(seed: MattermostSeed): Record<string, GroupActivity> {
  const type = new Map((seed.channels ?? []).map((c) => [String(c.id), String(c.type)]))
  const out: Record<string, { firstJoinedAt?: number; firstSentAt?: number }> = {}
  const note = (channel: unknown, field: 'firstJoinedAt' | 'firstSentAt', t: unknown) => {
    const id = String(channel)
    const kind = type.get(id)
    if (kind === undefined || kind === 'D' || typeof t !== 'number' || t <= 0) {
      return
    }
    const e = (out[id] ??= {})
    e[field] = Math.min(e[field] ?? Infinity, t)
  }
  for (const h of seed.channelmemberhistory ?? []) {
    note(h.channelid, 'firstJoinedAt', h.jointime)
  }
  for (const p of seed.posts ?? []) {
    note(p.channelid, 'firstSentAt', p.createat)
  }
  return out
}

for (const engine of ['postgres', 'mysql'] as const) {
  const skip = engine === 'mysql' && inject('mysqlUrl') === undefined
  describe.skipIf(skip)(`Mattermost groupActivity on ${engine === 'mysql' ? 'MariaDB' : engine}`, () => {
    let db: TestDatabase
    let seed: MattermostSeed
    let session: SourceSession

    beforeAll(async () => {
      db = engine === 'postgres' ? await createTestDatabase('cf_mm_activity') : await createMysqlTestDatabase('cf_mm_activity')
      seed = await loadMattermostFixture(engine, db.url)
      const config = SourceConfigSchema.parse({
        connector: 'mattermost',
        url: db.url,
        groupName: '{channel}',
        fileBaseUrl: 'https://files.example.com/mm',
      })
      session = await createConnector(config).open()
    })

    afterAll(async () => {
      await session?.close()
      await db?.drop()
    })

    it('answers the earliest join and post of every non-direct channel, in one snapshot', async () => {
      expect(session.groupActivity).toBeTypeOf('function')
      const got = Object.fromEntries(await (session.groupActivity as NonNullable<SourceSession['groupActivity']>)())
      const expected = expectedActivity(seed)
      expect(Object.keys(expected).length).toBeGreaterThan(2)
      expect(got).toEqual(expected)
    })
  })
}
