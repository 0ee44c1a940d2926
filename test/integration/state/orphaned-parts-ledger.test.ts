/**
 * The orphaned parts of a split message, in the planning transaction of its page (`planPage` with
 * `changes.orphans`), on Postgres and on the embedded PGlite store: when a message's new mapping has
 * fewer parts, a loaded part gets a `message.delete` intent (and its removal is marked), a part not
 * sent yet is skipped with the planner's reason, the first part gets its edit; a message whose item
 * did not change is not looked at.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { messageMuid, partMuid } from '../../../mappings/index.ts'
import { changeClassifier } from '../../../src/plan/change-classifier.ts'
import { ChangesSchema } from '../../../src/plan/changes-config.ts'
import { ORPHANED_PART_REASON, orphanedParts } from '../../../src/plan/orphaned-parts.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { noUpdates } from '../../../src/state/update-plan-ledger.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'

const { stores } = useBothLedgers('cf_orphans')

const message = (legacyId: string, key: string, text: string) => ({
  legacyId,
  targetKey: key,
  payload: {
    muid: key,
    sender: 'u1',
    receiverType: 'group',
    receiver: 'g1',
    category: 'message',
    type: 'text',
    sentAt: 1_700_000_000,
    data: { text },
  },
})

describe.each(stores)('orphaned parts on $name', (entry) => {
  const store = () => entry.store as LedgerStore

  it('a loaded part is deleted through the update lane, an unsent one skipped, the first part edited; an unchanged message is not looked at', async () => {
    const s = store()
    const db = inspectLedger(s)
    await s.ensureJob('parts', 'app')
    const m = messageMuid('42')
    const other = messageMuid('43')
    await s.planItems('parts', 'messages', [
      message('42', m, 'part one'),
      message('42', partMuid(m, 2), 'part two'),
      message('42', partMuid(m, 3), 'part three'),
      message('43', other, 'one'),
      message('43', partMuid(other, 2), 'two'),
    ])
    // Loaded: all but the third part of 42, which is still waiting.
    await sql`update chatferry.items set status = 'done', loaded_hash = payload_hash
      where job_id = 'parts' and target_key <> ${partMuid(m, 3)}`.execute(db)

    const recorded = noUpdates()
    const classify = changeClassifier('messages', { changes: ChangesSchema.parse({}), deletesMode: 'skip', metadataKey: 'legacy' }, {})
    await s.planPage('parts', 'messages', {
      // 42 now fits in one part (truncated); 43 comes again unchanged, in its two parts.
      items: [message('42', m, 'part one […]'), message('43', other, 'one'), message('43', partMuid(other, 2), 'two')],
      changes: { classify, recorded, orphans: orphanedParts('messages', 20) },
    })

    const updates = await sql<{ kind: string; target_key: string; status: string; reason: string }>`
      select kind, target_key, status, reason from chatferry.updates where job_id = 'parts' order by id`.execute(db)
    expect(updates.rows.map((u) => [u.kind, u.target_key, u.status])).toEqual([
      ['message.edit', m, 'planned'],
      ['message.delete', partMuid(m, 2), 'planned'],
    ])
    expect(updates.rows[1]?.reason).toBe('no longer a part of its message (its text now takes fewer parts)')
    const items = await sql<{ target_key: string; status: string; vanished: boolean; last_error_message: string | null }>`
      select target_key, status, vanished_at is not null as vanished, last_error_message from chatferry.items
      where job_id = 'parts' order by id`.execute(db)
    expect(items.rows.map((i) => [i.target_key, i.status, i.vanished])).toEqual([
      [m, 'done', false],
      [partMuid(m, 2), 'done', true],
      [partMuid(m, 3), 'skipped', false],
      [other, 'done', false],
      [partMuid(other, 2), 'done', false],
    ])
    expect(items.rows[2]?.last_error_message).toBe(ORPHANED_PART_REASON)
    expect(recorded).toMatchObject({ planned: 2 })
  })
})
