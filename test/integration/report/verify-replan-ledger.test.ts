/**
 * `verify --replan`'s ledger operations, on Postgres and on the embedded PGlite store: done items
 * the platform lacks and rejected items it holds are planned again (batch, attempts, error and
 * platform id forgotten), nothing else is; an item's newest done removal is planned again, an
 * older one is not, nor one whose kind is already planned.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import type { UpdateIntent } from '../../../src/state/update-plan-ledger.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'

const { stores } = useBothLedgers('cf_verify_replan')

const removal = (targetKey: string): UpdateIntent => ({
  kind: 'message.delete',
  targetKey,
  legacyId: targetKey,
  body: {},
  policy: 'apply',
  reason: 'vanished from the source',
  payloadHash: null,
})

describe.each(stores)('verify --replan on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const db = () => inspectLedger(store())

  it('plans again done items the platform lacks and rejected items it holds, and nothing else', async () => {
    await store().ensureJob('items', 'app')
    await store().planItems('items', 'users', users(4))
    await sql`update chatferry.items set status = 'done', platform_id = 'p0', attempts = 2, batch_id = null where job_id = 'items' and target_key = 'u0'`.execute(
      db(),
    )
    await sql`update chatferry.items set status = 'rejected', last_error_code = 'HTTP_500', last_error_message = 'failed' where job_id = 'items' and target_key = 'u1'`.execute(
      db(),
    )
    await sql`update chatferry.items set status = 'skipped' where job_id = 'items' and target_key = 'u2'`.execute(db())
    await sql`update chatferry.items set status = 'done' where job_id = 'items' and target_key = 'u3'`.execute(db())

    expect(await store().replanItems('items', 'users', ['u0', 'u1', 'u2', 'nosuch'])).toBe(2)
    const rows = await sql<{ target_key: string; status: string; platform_id: string | null; attempts: number; last_error_code: string | null }>`
      select target_key, status, platform_id, attempts, last_error_code from chatferry.items where job_id = 'items' order by target_key`.execute(db())
    expect(rows.rows).toEqual([
      { target_key: 'u0', status: 'planned', platform_id: null, attempts: 0, last_error_code: null },
      { target_key: 'u1', status: 'planned', platform_id: null, attempts: 0, last_error_code: null },
      { target_key: 'u2', status: 'skipped', platform_id: null, attempts: 0, last_error_code: null },
      { target_key: 'u3', status: 'done', platform_id: null, attempts: 0, last_error_code: null },
    ])
    expect(await store().replanItems('items', 'users', [])).toBe(0)
  })

  it("plans again an item's newest done removal, not an older one, nor one already planned", async () => {
    await store().ensureJob('removals', 'app')
    await store().planItems('removals', 'messages', messages(2, 1))
    await sql`update chatferry.items set status = 'done' where job_id = 'removals'`.execute(db())
    const settle = () =>
      sql`update chatferry.updates set status = 'done', settled_at = now() where job_id = 'removals' and status = 'planned'`.execute(db())
    await store().updatePlan.record('removals', 'messages', [removal('m0'), removal('m1')])
    await settle()
    await store().updatePlan.record('removals', 'messages', [removal('m0')])
    await settle()
    // m1's removal is planned again already.
    await store().updatePlan.record('removals', 'messages', [removal('m1')])

    expect(await store().replanDoneRemovals('removals', 'messages', ['m0', 'm1'])).toBe(1)
    const rows = await sql<{ target_key: string; status: string }>`
      select target_key, status from chatferry.updates where job_id = 'removals' order by target_key, id`.execute(db())
    expect(rows.rows).toEqual([
      { target_key: 'm0', status: 'done' },
      { target_key: 'm0', status: 'planned' },
      { target_key: 'm1', status: 'done' },
      { target_key: 'm1', status: 'planned' },
    ])
  })
})
