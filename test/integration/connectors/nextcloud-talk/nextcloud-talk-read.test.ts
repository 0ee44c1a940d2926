/**
 * The Nextcloud Talk connector against its fixture on Postgres (default prefix `oc_`, default
 * settings) and MariaDB (prefix `nc_`, changelog and note-to-self read, a site URL): every entity
 * read whole equals what the seed rows and the documented mapping predict, row for row (records
 * and problems with their field), `count()` agrees, a delta read returns exactly the comments
 * created or named by a newer comment, and `readKeys` yields the same legacy ids.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import {
  createNextcloudTalkConnector,
  type NextcloudTalkConfigInput,
  NextcloudTalkConfigSchema,
} from '../../../../connectors/nextcloud-talk/index.ts'
import type { SourceRow, SourceSession } from '../../../../src/model/connector.ts'
import { LEGACY_ENTITIES, type LegacyEntity, legacyIdOf } from '../../../../src/model/records.ts'
import { expectedNextcloud, type NextcloudExpectOptions } from '../../../fixtures/nextcloud-talk/expected.ts'
import { type FixtureEngine, loadNextcloudFixture, MINUTE, type NextcloudSeed, T0 } from '../../../fixtures/nextcloud-talk/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'

interface Case {
  readonly engine: FixtureEngine
  readonly prefix: string
  readonly settings: Omit<NextcloudTalkConfigInput, 'connector' | 'url'>
  readonly expect: NextcloudExpectOptions
}

const SITE = 'https://cloud.example.com'
const CASES: Case[] = [
  { engine: 'postgres', prefix: 'oc_', settings: {}, expect: {} },
  {
    engine: 'mysql',
    prefix: 'nc_',
    settings: { tablePrefix: 'nc_', siteUrl: SITE, rooms: { changelog: 'group', noteToSelf: 'self' } },
    expect: { siteUrl: SITE, rooms: { changelog: 'group', noteToSelf: 'self' } },
  },
]

const dbs: TestDatabase[] = []
afterAll(async () => {
  for (const db of dbs) {
    await dropWithin(db)
  }
})

async function readAll(session: SourceSession, entity: LegacyEntity, since?: number): Promise<SourceRow<unknown>[]> {
  const rows: SourceRow<unknown>[] = []
  for await (const page of session.read(entity, { pageSize: 3, ...(since !== undefined ? { since } : {}) })) {
    rows.push(...page.rows)
  }
  return rows
}

/** A row as the expectation states it: a record, or a problem's legacy id and field. */
const shape = (r: SourceRow<unknown>): SourceRow<unknown> | { ok: false; legacyId: string; field: string } =>
  r.ok ? r : { ok: false, legacyId: r.legacyId, field: r.field }

describe.each(CASES)('nextcloud-talk on $engine (prefix $prefix)', (c) => {
  const noServer = c.engine === 'mysql' && mysqlServerUrl() === undefined
  let session: SourceSession
  let seed: NextcloudSeed

  beforeAll(async () => {
    if (noServer) {
      return
    }
    const db = c.engine === 'postgres' ? await createTestDatabase('cf_nc_read') : await createMysqlTestDatabase('cf_nc_read')
    dbs.push(db)
    seed = await loadNextcloudFixture(c.engine, db.url, { prefix: c.prefix })
    session = await createNextcloudTalkConnector(NextcloudTalkConfigSchema.parse({ connector: 'nextcloud-talk', url: db.url, ...c.settings })).open()
    return () => session.close()
  })

  it.skipIf(noServer).each(LEGACY_ENTITIES)('%s: every row as the seed and the mapping predict; count() agrees', async (entity) => {
    const want = expectedNextcloud(seed, c.expect)[entity]
    const got = (await readAll(session, entity)).map(shape)
    expect(got).toEqual(want)
    // The expectation itself holds the planted gotchas.
    const planted = {
      users: 6,
      groups: c.engine === 'mysql' ? 5 : 4,
      members: c.engine === 'mysql' ? 12 : 11,
      messages: c.engine === 'mysql' ? 30 : 28,
    }[entity]
    expect(want.length).toBe(planted)
    if (entity === 'messages') {
      expect(want.flatMap((r) => (r.ok ? [] : [`${r.legacyId}:${r.field}`]))).toEqual([
        '40:message',
        '41:object_id',
        '42:message',
        '43:meta_data',
        '44:actor_id',
        '45:creation_timestamp',
        '46:object_id',
      ])
    }
    expect(await session.count(entity)).toBe(want.length)
    const keys: string[] = []
    for await (const page of session.readKeys?.(entity) ?? []) {
      keys.push(...page)
    }
    expect(keys).toEqual(want.map((r) => (r.ok ? legacyIdOf(entity, r.record) : r.legacyId)))
  })

  it.skipIf(noServer)(
    'delta: comments created at or after `since`, and older ones a newer comment names (edit, deletion, reaction, reply)',
    async () => {
      const since = T0 + 10 * MINUTE
      const want = expectedNextcloud(seed, { ...c.expect, since }).messages
      const got = (await readAll(session, 'messages', since)).map(shape)
      expect(got).toEqual(want)
      // The edited (7) and deleted (9) comments come back through their system messages.
      expect(got.flatMap((r) => ('record' in r ? [(r.record as { id: string }).id] : []))).toEqual(expect.arrayContaining(['7', '9']))
      expect(await session.countChangedSince?.('messages', since)).toBe(want.length)
      expect(session.countChangedSince).toBeDefined()
      expect(await session.countChangedSince?.('users', since)).toBeUndefined()
    },
  )
})
