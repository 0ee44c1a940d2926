/**
 * The Mattermost connector's per-page lookups (`connectors/mattermost/sql/page-lookups.ts`), on
 * real Postgres and MariaDB with Mattermost's own tables: the channel of each post (kept across
 * pages, looked up again once dropped past the limit, `null` when the snapshot has none), and the
 * latest join time of each membership in pages larger than one statement's chunk.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ChannelKinds, joinTimesOf } from '../../../../connectors/mattermost/sql/page-lookups.ts'
import { openSnapshotConnection, type SnapshotConnection } from '../../../../connectors/sql/snapshot-connection.ts'
import { loadMattermostFixture, type MattermostEngine, openFixtureWriter } from '../../../fixtures/mattermost/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { createMysqlTestDatabase, mysqlServerUrl } from '../../../helpers/mysql.ts'

const channel = (id: string, type: string, name: string) => ({
  id,
  type,
  name,
  displayname: name,
  createat: 1,
  updateat: 1,
  deleteat: 0,
  teamid: 't1',
})

describe.each<MattermostEngine>(['postgres', 'mysql'])('Mattermost page lookups on %s', (engine) => {
  const noServer = engine === 'mysql' && mysqlServerUrl() === undefined
  let db: TestDatabase
  let conn: SnapshotConnection
  const statements: string[] = []

  beforeAll(async () => {
    if (noServer) {
      return
    }
    db = engine === 'postgres' ? await createTestDatabase('cf_mm_lookup') : await createMysqlTestDatabase('cf_mm_lookup')
    await loadMattermostFixture(engine, db.url, { schemaOnly: true })
    const w = await openFixtureWriter(engine, db.url)
    try {
      await w.insert('channels', [channel('c1', 'O', 'town'), channel('c2', 'D', 'u1__u2'), channel('c3', 'P', 'ops'), channel('c4', 'G', 'g')])
      const history = [
        { channelid: 'c1', userid: 'u1', jointime: 100 },
        { channelid: 'c1', userid: 'u1', jointime: 300 },
        { channelid: 'c1', userid: 'u2', jointime: 50 },
        { channelid: 'c3', userid: 'u1', jointime: 70 },
        // A member who left: history inside a page's range, not on the page.
        { channelid: 'c2', userid: 'u7', jointime: 60 },
        // Enough pairs for a page to span several statements.
        ...Array.from({ length: 2500 }, (_, i) => ({ channelid: 'c9', userid: `v${String(i).padStart(4, '0')}`, jointime: 1000 + i })),
      ]
      await w.insert('channelmemberhistory', history)
    } finally {
      await w.close()
    }
    conn = await openSnapshotConnection(db.url)
    const query = conn.query.bind(conn)
    conn.query = (sql, params, what) => {
      statements.push(what ?? sql)
      return query(sql, params, what)
    }
  }, 60_000)

  afterAll(async () => {
    await conn?.close()
    await db?.drop()
  })

  const posts = (...ids: string[]) => ids.map((channelid) => ({ channelid }))

  it.skipIf(noServer)('a channel is looked up once, kept for later pages, and looked up again once dropped', async () => {
    const kinds = new ChannelKinds(conn, 3)
    statements.length = 0
    const first = await kinds.forPage(posts('c1', 'c2', 'c1'))
    expect(first.get('c1')).toEqual({ type: 'O' })
    expect(first.get('c2')).toEqual({ type: 'D', name: 'u1__u2' })
    expect(statements).toHaveLength(1)

    await kinds.forPage(posts('c2', 'c1'))
    expect(statements).toHaveLength(1)

    // Past the limit the others are dropped; the page's own (none known) are looked up.
    const third = await kinds.forPage(posts('c3', 'c4', 'gone'))
    expect(third.get('c3')).toEqual({ type: 'P' })
    expect(third.get('c4')).toEqual({ type: 'G' })
    expect(third.get('gone')).toBeNull()
    expect(third.has('c1')).toBe(false)
    expect(statements).toHaveLength(2)

    // A known channel on the page survives the next drop; the dropped one is read again.
    const fourth = await kinds.forPage(posts('c4', 'c1'))
    expect(fourth.get('c1')).toEqual({ type: 'O' })
    expect(fourth.get('c4')).toEqual({ type: 'G' })
    expect(statements).toHaveLength(3)
  })

  it.skipIf(noServer)("each membership gets its history's latest join time; one without history gets none", async () => {
    const page = [
      { channelid: 'c1', userid: 'u1' },
      { channelid: 'c1', userid: 'u2' },
      { channelid: 'c1', userid: 'u3' },
      { channelid: 'c3', userid: 'u1' },
    ]
    const times = await joinTimesOf(conn, page)
    expect(Number(times.get('c1', 'u1'))).toBe(300)
    expect(Number(times.get('c1', 'u2'))).toBe(50)
    expect(Number(times.get('c3', 'u1'))).toBe(70)
    expect(times.get('c1', 'u3')).toBeUndefined()
    // Postgres reads the page's key range, which also holds the history of members not on it.
    expect(times.size).toBe(engine === 'postgres' ? 4 : 3)
  })

  it.skipIf(noServer)('a page of 2,500 members: one range on Postgres, chunks of pairs elsewhere, every pair answered', async () => {
    const page = Array.from({ length: 2500 }, (_, i) => ({ channelid: 'c9', userid: `v${String(i).padStart(4, '0')}` }))
    statements.length = 0
    const times = await joinTimesOf(conn, page)
    expect(statements).toHaveLength(engine === 'postgres' ? 1 : 3)
    expect(times.size).toBe(2500)
    expect(Number(times.get('c9', 'v2499'))).toBe(3499)
    expect(Number(times.get('c9', 'v0000'))).toBe(1000)
  })

  it.skipIf(noServer)('ids match as the engine compares them (MySQL: across case and trailing spaces), as the join they replace did', async () => {
    const kinds = new ChannelKinds(conn)
    const found = await kinds.forPage(posts('C1 '))
    const times = await joinTimesOf(conn, [{ channelid: 'C1', userid: 'U1 ' }])
    if (engine === 'mysql') {
      expect(found.get('C1 ')).toEqual({ type: 'O' })
      expect(Number(times.get('C1', 'U1 '))).toBe(300)
    } else {
      expect(found.get('C1 ')).toBeNull()
      expect(times.size).toBe(0)
    }
  })
})
