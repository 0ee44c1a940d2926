/**
 * A later run or delta knows, from the ledger, the users and groups an earlier run rejected — by
 * their source row (`SOURCE_ROW_INVALID`) or by their mapping (`MAPPING_INVALID`) — and rejects a
 * new message or membership that refers to one naming that reject: never "unknown user/group",
 * never a skip. Real Postgres ledger; the planner's own lookups and `mapPage` (the unit test of the
 * same run is test/unit/plan/rejected-dependencies.test.ts).
 */
import { afterAll, beforeAll, expect, it } from 'vitest'

import { defaultPolicies } from '../../../mappings/index.ts'
import type { SourceRow, SourceSession } from '../../../src/model/connector.ts'
import type { LegacyMember, LegacyMessage } from '../../../src/model/records.ts'
import { createLedgerSink } from '../../../src/plan/ledger-sink.ts'
import { mapPage } from '../../../src/plan/map-page.ts'
import { startPlanRun } from '../../../src/plan/plan-run.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { createTestDatabase, type TestDatabase } from '../../helpers/db.ts'
import { groups, users } from '../../helpers/ledger-fixtures.ts'

const NOW = Date.now()
let db: TestDatabase
let store: LedgerStore

beforeAll(async () => {
  db = await createTestDatabase('cf_rejected_deps')
  store = await openLedger({ url: db.url })
  await store.ensureJob('j', 'app')
  await store.planPage('j', 'users', {
    items: users(1),
    rejects: [
      { legacyId: 'row-bad', code: 'SOURCE_ROW_INVALID', message: 'name: empty' },
      { legacyId: 'map-bad', code: 'MAPPING_INVALID', message: 'metadata.k: key holds U+0000' },
    ],
  })
  await store.planPage('j', 'groups', {
    items: groups(1),
    rejects: [
      { legacyId: 'row-locked', code: 'SOURCE_ROW_INVALID', message: 'type: unknown room kind' },
      { legacyId: 'map-locked', code: 'MAPPING_INVALID', message: 'type: unknown group type "secret"' },
    ],
  })
})

afterAll(async () => {
  await store?.close()
  await db?.drop()
})

const message = (id: string, senderId: string, receiverId: string): SourceRow<LegacyMessage> => ({
  ok: true,
  record: { id, senderId, receiverType: 'group', receiverId, type: 'text', text: 'hi', sentAt: NOW - 60_000 },
})
const member = (groupId: string, userId: string): SourceRow<LegacyMember> => ({
  ok: true,
  record: { groupId, userId, scope: 'participant', banned: false },
})

it('a delta rejects what refers to a user or group rejected earlier (row or mapping), naming that reject', async () => {
  const run = await startPlanRun({
    jobId: 'j',
    session: {} as SourceSession,
    policies: defaultPolicies(),
    now: NOW,
    sink: createLedgerSink(store, 'j'),
  })
  const members = mapPage(
    run,
    'members',
    [member('0', '0'), member('0', 'map-bad'), member('map-locked', '0'), member('row-locked', '0')],
    run.entities.members,
  )
  const messages = mapPage(
    run,
    'messages',
    [
      message('m1', '0', '0'),
      message('m2', 'row-bad', '0'),
      message('m3', 'map-bad', '0'),
      message('m4', '0', 'map-locked'),
      message('m5', '0', 'row-locked'),
    ],
    run.entities.messages,
  )
  expect(members.skips).toEqual([])
  expect(messages.skips).toEqual([])
  expect(members.items.map((i) => i.legacyId)).toEqual(['0/0'])
  expect(messages.items.map((i) => i.legacyId)).toEqual(['m1'])
  const reasons = (rejects: readonly { legacyId: string; message: string }[]) => Object.fromEntries(rejects.map((r) => [r.legacyId, r.message]))
  expect(reasons(members.rejects)).toEqual({
    '0/map-bad': 'userId: its user "map-bad" was rejected (metadata.k: key holds U+0000)',
    'map-locked/0': 'groupId: its group "map-locked" was rejected (type: unknown group type "secret")',
    'row-locked/0': 'groupId: its group "row-locked" was rejected (type: unknown room kind)',
  })
  expect(reasons(messages.rejects)).toEqual({
    m2: expect.stringContaining('its sender "row-bad" was rejected (name: empty)'),
    m3: expect.stringContaining('its sender "map-bad" was rejected (metadata.k: key holds U+0000)'),
    m4: expect.stringContaining('its group "map-locked" was rejected (type: unknown group type "secret")'),
    m5: expect.stringContaining('its group "row-locked" was rejected (type: unknown room kind)'),
  })
})
