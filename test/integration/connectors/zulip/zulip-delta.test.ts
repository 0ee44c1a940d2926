/**
 * The Zulip connector's delta reads against its fixture on Postgres: a delta from the watermark a
 * full read saved must see every row changed after that read — a message sent in the same
 * millisecond as the last one read (Postgres keeps microseconds), a stream's new subscriber and a
 * topic made by moving messages with `topics: group-per-topic` — or it vanishes from the migration
 * without a word.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { createZulipConnector, type ZulipConfigInput, ZulipConfigSchema } from '../../../../connectors/zulip/index.ts'
import type { SourceSession } from '../../../../src/model/connector.ts'
import { type LegacyEntity, legacyIdOf } from '../../../../src/model/records.ts'
import { loadZulipFixture, message, openZulipWriter, streamRecipient, sub, ZS, ZU } from '../../../fixtures/zulip/load.ts'
import { createTestDatabase, type TestDatabase } from '../../../helpers/db.ts'
import { dropWithin } from '../../../helpers/loader-harness.ts'

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase('cf_zulip_delta')
  await loadZulipFixture(db.url)
})

afterAll(async () => {
  await dropWithin(db)
})

async function withSession<T>(settings: Omit<ZulipConfigInput, 'connector' | 'url' | 'realm'>, f: (s: SourceSession) => Promise<T>): Promise<T> {
  const s = await createZulipConnector(ZulipConfigSchema.parse({ connector: 'zulip', url: db.url, realm: 'acme', pageSize: 4, ...settings })).open()
  try {
    return await f(s)
  } finally {
    await s.close()
  }
}

/** The legacy ids a read yields (records and problems) and its watermark. */
async function readAll(s: SourceSession, entity: LegacyEntity, since?: number): Promise<{ ids: string[]; watermark: number | undefined }> {
  const ids: string[] = []
  let watermark: number | undefined
  for await (const page of s.read(entity, since === undefined ? {} : { since })) {
    for (const r of page.rows) {
      ids.push(r.ok ? legacyIdOf(entity, r.record as never) : r.legacyId)
    }
    watermark = page.watermark ?? watermark
  }
  return { ids, watermark }
}

describe('zulip delta', () => {
  it('a message sent in the same millisecond as the last one read, after the read, is in the next delta', async () => {
    // Microseconds past a millisecond's middle: a watermark rounded to the nearest millisecond
    // lands after both messages, and the delta's `>= since` skips the second.
    const w = await openZulipWriter(db.url)
    try {
      await w.insert('zerver_message', [message(4001, 0, { date_sent: '2030-01-01T00:00:00.123600Z', content: 'first' })])
    } finally {
      await w.close()
    }
    const full = await withSession({}, (s) => readAll(s, 'messages'))
    expect(full.ids).toContain('4001')
    expect(full.watermark).toBe(Date.parse('2030-01-01T00:00:00.123Z'))

    const w2 = await openZulipWriter(db.url)
    try {
      await w2.insert('zerver_message', [message(4002, 0, { date_sent: '2030-01-01T00:00:00.123800Z', content: 'second, same ms' })])
    } finally {
      await w2.close()
    }
    const delta = await withSession({}, (s) => readAll(s, 'messages', full.watermark))
    // 4001 again (`>=`: the watermark's own instant), and the message sent after the read.
    expect(delta.ids).toEqual(expect.arrayContaining(['4001', '4002']))
    expect(delta.ids).not.toContain('1001')
  })

  it('group-per-topic: a new subscriber of a stream and a topic made by moving a message are in the next delta', async () => {
    const design = streamRecipient(ZS.design)
    const full = await withSession({ topics: 'group-per-topic' }, async (s) => ({
      groups: await readAll(s, 'groups'),
      members: await readAll(s, 'members'),
    }))
    expect(full.groups.ids).toContain(`${ZS.design}/logo`)
    expect(full.members.ids).not.toContain(`${ZS.design}/logo/${ZU.bob}`)

    // After the full read: Bob subscribes to #design (Zulip logs SUBSCRIPTION_CREATED), and
    // message 1005 is moved from topic "logo" to the new topic "brand" (Zulip sets last_edit_time).
    const now = new Date(Math.max(full.groups.watermark ?? 0, full.members.watermark ?? 0, Date.now()) + 60_000).toISOString()
    const w = await openZulipWriter(db.url)
    try {
      await w.insert('zerver_subscription', [sub(ZU.bob, design, { id: 990 })])
      await w.exec(
        `INSERT INTO zerver_realmauditlog (id, realm_id, acting_user_id, modified_user_id, modified_stream_id, event_time, backfilled, extra_data, event_type, scrubbed)
         VALUES (990, 2, $1, $1, $2, $3, false, '{}', 301, false)`,
        [ZU.bob, ZS.design, now],
      )
      await w.exec(`UPDATE zerver_message SET subject = 'brand', last_edit_time = $1 WHERE id = 1005`, [now])
    } finally {
      await w.close()
    }

    const delta = await withSession({ topics: 'group-per-topic' }, async (s) => ({
      groups: await readAll(s, 'groups', full.groups.watermark),
      members: await readAll(s, 'members', full.members.watermark),
    }))
    expect(delta.groups.ids).toContain(`${ZS.design}/brand`)
    expect(delta.members.ids).toEqual(
      expect.arrayContaining([
        `${ZS.design}/logo/${ZU.bob}`,
        `${ZS.design}/brand/${ZU.alice}`,
        `${ZS.design}/brand/${ZU.bob}`,
        `${ZS.design}/brand/${ZU.carol}`,
      ]),
    )
    // Nothing that did not change: Alice and Carol were members of "logo" before.
    expect(delta.members.ids).not.toContain(`${ZS.design}/logo/${ZU.alice}`)
  })
})
