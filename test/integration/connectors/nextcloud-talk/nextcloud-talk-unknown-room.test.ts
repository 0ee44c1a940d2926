/**
 * A Talk room of a type this connector does not know (a newer Talk's): the room, its user
 * attendees and its comments are each read and refused with a reason — never left out of every
 * read without a word — and `count()` agrees with what a read yields.
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { createNextcloudTalkConnector, NextcloudTalkConfigSchema } from '../../../../connectors/nextcloud-talk/index.ts'
import type { SourceRow, SourceSession } from '../../../../src/model/connector.ts'
import { type LegacyEntity, legacyIdOf } from '../../../../src/model/records.ts'
import { loadNextcloudFixture, openFixtureWriter } from '../../../fixtures/nextcloud-talk/load.ts'
import { attendee, comment, room } from '../../../fixtures/nextcloud-talk/seed.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'

let db: TestDatabase
let session: SourceSession

beforeAll(async () => {
  db = await createTestDatabase('cf_nc_unknown_room')
  await loadNextcloudFixture('postgres', db.url)
  const w = await openFixtureWriter('postgres', db.url, 'oc_')
  try {
    await w.insert('talk_rooms', [room(70, 42, 'From a newer Talk')])
    await w.insert('talk_attendees', [attendee(700, 70, 'alice', 1)])
    await w.insert('comments', [comment(7000, 70, 'alice', 'comment', 'hello from type 42', 5)])
  } finally {
    await w.close()
  }
  session = await createNextcloudTalkConnector(NextcloudTalkConfigSchema.parse({ connector: 'nextcloud-talk', url: db.url })).open()
})

afterAll(async () => {
  await session?.close()
  await dropWithin(db)
})

async function rowsOf(entity: LegacyEntity): Promise<Map<string, SourceRow<unknown>>> {
  const out = new Map<string, SourceRow<unknown>>()
  for await (const page of session.read(entity, { pageSize: 3 })) {
    for (const r of page.rows) {
      out.set(r.ok ? legacyIdOf(entity, r.record as never) : r.legacyId, r)
    }
  }
  expect(await session.count(entity)).toBe(out.size)
  return out
}

it('a room of an unknown type is a problem on its type; its members are read; its comments are problems', async () => {
  expect((await rowsOf('groups')).get('70')).toMatchObject({ ok: false, field: 'type' })
  // A member of a refused group: the mapping rejects it as a member of an unknown group.
  expect((await rowsOf('members')).get('70/alice')).toMatchObject({ ok: true, record: { groupId: '70', userId: 'alice' } })
  expect((await rowsOf('messages')).get('7000')).toMatchObject({ ok: false, field: 'talk_rooms.type' })
})
