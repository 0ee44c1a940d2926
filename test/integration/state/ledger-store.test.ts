/**
 * The ledger's semantics, on Postgres and on the embedded PGlite store: planning is idempotent,
 * changed payloads are handled per status, a cursor advances only with its page (a page whose
 * last statement, the cursor's, fails leaves nothing of its earlier statements), and the
 * reject/retry and id-map paths.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import { MIGRATIONS } from '../../../src/state/migrations/index.ts'
import { type LedgerStore, openLedger } from '../../../src/state/store.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { users } from '../../helpers/ledger-fixtures.ts'

const ledgers = useBothLedgers('cf_ledger')
const { stores } = ledgers

describe.each(stores)('ledger on $name', (entry) => {
  const store = () => entry.store as LedgerStore

  it('migrates on first use and again without effect', async () => {
    const again = await openLedger(entry.name === 'postgres' ? { url: ledgers.db().url } : { dir: 'memory://' })
    await again.close()
    const r = await sql<{ n: number }>`select count(*)::int as n from chatferry.kysely_migration`.execute(inspectLedger(store()))
    expect(r.rows[0]?.n).toBe(Object.keys(MIGRATIONS).length)
  })

  it('planning the same items twice creates no duplicates and leaves them untouched', async () => {
    await store().ensureJob('twice', 'app')
    const first = await store().planItems('twice', 'users', users(120))
    expect(first.inserted).toBe(120)
    const before = await sql<{ updated_at: Date }>`select max(updated_at) as updated_at from chatferry.items where job_id = 'twice'`.execute(
      inspectLedger(store()),
    )
    const second = await store().planItems('twice', 'users', users(120))
    expect(second).toMatchObject({ inserted: 0, unchanged: 120, updated: 0 })
    const after = await sql<{
      updated_at: Date
      n: number
    }>`select max(updated_at) as updated_at, count(*)::int as n from chatferry.items where job_id = 'twice'`.execute(inspectLedger(store()))
    expect(after.rows[0]?.n).toBe(120)
    expect(new Date(after.rows[0]!.updated_at).getTime()).toBe(new Date(before.rows[0]!.updated_at).getTime())
    const dup = await store().planItems('twice', 'users', [...users(2), ...users(2)])
    expect(dup.duplicates).toBe(2)
  })

  it('a second legacy row whose target key another legacy row holds is rejected with both ids, never written over the first', async () => {
    const s = store()
    await s.ensureJob('collide', 'app')
    const [first] = users(1)
    await s.planItems('collide', 'users', [first!])
    // A later page: another legacy row mapping to the same target key, with another payload.
    const twin = { ...first!, legacyId: 'other-row', payload: { ...(first!.payload as object), name: 'Not the first' } }
    const counts = await s.planItems('collide', 'users', [twin])
    expect(counts).toMatchObject({ inserted: 0, updated: 0, unchanged: 0, duplicates: 1, rejected: 1 })
    const rows = await sql<{
      legacy_id: string
      target_key: string
      status: string
      last_error_code: string | null
      last_error_message: string | null
      name: string | null
    }>`
      select legacy_id, target_key, status, last_error_code, last_error_message, (payload::jsonb)->>'name' as name
      from chatferry.items where job_id = 'collide' order by legacy_id`.execute(inspectLedger(s))
    expect(rows.rows).toEqual([
      { legacy_id: '0', target_key: 'u0', status: 'planned', last_error_code: null, last_error_message: null, name: 'User 0' },
      {
        legacy_id: 'other-row',
        target_key: '~legacy:other-row#duplicate-of:0',
        status: 'rejected',
        last_error_code: 'DUPLICATE_TARGET_KEY',
        last_error_message: 'targetKey: legacy rows 0 and other-row both map to u0; the first (0) is kept',
        name: null,
      },
    ])
    expect(await s.retryRejected('collide')).toBe(0)
    // The first row itself planned again (a resumed or delta read) is still an ordinary update.
    const again = await s.planItems('collide', 'users', [{ ...first!, payload: { ...(first!.payload as object), name: 'Renamed' } }])
    expect(again).toMatchObject({ updated: 1, duplicates: 0, rejected: 0 })
  })

  it('a changed payload: planned → updated; done → recorded as loaded-but-changed, not resent; rejected → planned again', async () => {
    const s = store()
    await s.ensureJob('changes', 'app')
    await s.planItems('changes', 'users', users(3))
    // Pretend u1 was loaded and u2 rejected by the platform.
    await sql`update chatferry.items set status = 'done', done_reason = 'created', loaded_hash = payload_hash where job_id = 'changes' and target_key = 'u1'`.execute(
      inspectLedger(s),
    )
    await sql`update chatferry.items set status = 'rejected', last_error_code = 'ERR_X' where job_id = 'changes' and target_key = 'u2'`.execute(
      inspectLedger(s),
    )
    const changed = users(3).map((u) => ({ ...u, payload: { ...(u.payload as object), name: 'Renamed' } }))
    const counts = await s.planItems('changes', 'users', changed)
    expect(counts).toMatchObject({ updated: 1, loadedButChanged: 1, replanned: 1, inserted: 0 })
    const rows = await sql<{ target_key: string; status: string; payload: string }>`
      select target_key, status, payload from chatferry.items where job_id = 'changes' order by target_key`.execute(inspectLedger(s))
    expect(rows.rows.map((r) => r.status)).toEqual(['planned', 'done', 'planned'])
    expect(rows.rows.every((r) => r.payload.includes('Renamed'))).toBe(true)
    const stats = (await s.entityStats('changes')).find((e) => e.entity === 'users')
    expect(stats).toMatchObject({ planned: 2, done: 1, loadedButChanged: 1 })
  })

  it('a cursor advances only together with its page: a failure in its last statement leaves nothing of the earlier ones', async () => {
    const s = store()
    const db = inspectLedger(s)
    await s.ensureJob('cursor', 'app')
    await s.planPage('cursor', 'users', { items: users(10), cursor: { value: { after: 10 }, watermark: '2024-01-01' } })
    expect((await s.getCursor('cursor', 'users'))?.cursor).toEqual({ after: 10 })
    // The next page writes, in order: ten new items and a renamed one, a skip, a reject, then the
    // cursor. The cursor's write (the transaction's last statement) fails here, and the error names
    // what the earlier statements had written by then, in the same transaction.
    await sql`create or replace function chatferry.test_refuse_cursor() returns trigger language plpgsql as $$
      begin
        raise exception 'cursor refused after % rows of the job, % renamed',
          (select count(*) from chatferry.items where job_id = new.job_id),
          (select count(*) from chatferry.items where job_id = new.job_id and (payload::jsonb)->>'name' = 'Renamed');
      end $$`.execute(db)
    await sql`create trigger test_refuse_cursor before insert or update on chatferry.cursors
      for each row when (new.job_id = 'cursor') execute function chatferry.test_refuse_cursor()`.execute(db)
    const renamed = { ...users(1)[0]!, payload: { ...(users(1)[0]!.payload as object), name: 'Renamed' } }
    const page = {
      items: [renamed, ...users(20).slice(10)],
      skips: [{ legacyId: '77', reason: 'policy:deleted-user' }],
      rejects: [{ legacyId: '88', code: 'MAPPING_INVALID', message: 'name is empty' }],
      cursor: { value: { after: 20 }, watermark: '2024-01-02' },
    }
    try {
      await expect(s.planPage('cursor', 'users', page)).rejects.toThrow('cursor refused after 22 rows of the job, 1 renamed')
    } finally {
      await sql`drop trigger test_refuse_cursor on chatferry.cursors`.execute(db)
      await sql`drop function chatferry.test_refuse_cursor()`.execute(db)
    }
    // Nothing of the page is left: no new item, skip or reject, the renamed item as it was, the cursor and watermark unmoved.
    const rows = await sql<{ target_key: string; status: string; name: string }>`
      select target_key, status, (payload::jsonb)->>'name' as name from chatferry.items where job_id = 'cursor' order by id`.execute(db)
    expect(rows.rows).toEqual(users(10).map((u, i) => ({ target_key: u.targetKey, status: 'planned', name: `User ${i}` })))
    expect(await s.getCursor('cursor', 'users')).toMatchObject({ cursor: { after: 10 }, watermark: '2024-01-01' })
    // The same page again, with nothing refusing it: written whole, as if for the first time.
    const counts = await s.planPage('cursor', 'users', page)
    expect(counts).toMatchObject({ inserted: 10, updated: 1, skipped: 1, rejected: 1 })
    expect(await s.getCursor('cursor', 'users')).toMatchObject({ cursor: { after: 20 }, watermark: '2024-01-02' })
  })

  it('skips and mapping rejects are kept with their reason; retry-rejected plans sendable ones again', async () => {
    const s = store()
    await s.ensureJob('quarantine', 'app')
    await s.planPage('quarantine', 'users', {
      items: users(2),
      skips: [{ legacyId: '77', reason: 'policy:deleted-user' }],
      rejects: [
        { legacyId: '88', code: 'MAPPING_INVALID', message: 'name is empty' },
        { legacyId: '99', targetKey: 'u99', code: 'MAPPING_INVALID', message: 'odd', payload: { uid: 'u99', name: 'x' } },
      ],
    })
    const rejects = await s.listRejects('quarantine')
    expect(rejects.map((r) => [r.legacyId, r.code])).toEqual([
      ['88', 'MAPPING_INVALID'],
      ['99', 'MAPPING_INVALID'],
    ])
    expect(await s.listRejects('quarantine', { code: 'OTHER' })).toHaveLength(0)
    // Only the reject with a payload can be sent again.
    expect(await s.retryRejected('quarantine', { code: 'MAPPING_INVALID' })).toBe(1)
    const stats = (await s.entityStats('quarantine')).find((e) => e.entity === 'users')
    expect(stats).toMatchObject({ planned: 3, skipped: 1, rejected: 1 })
    // A skip never downgrades a loaded item.
    await sql`update chatferry.items set status = 'done' where job_id = 'quarantine' and target_key = 'u0'`.execute(inspectLedger(s))
    expect(await s.skipItem('quarantine', 'users', { legacyId: '0', targetKey: 'u0', reason: 'late policy' })).toBe(0)
  })

  it('the id map is unique both ways', async () => {
    const s = store()
    await s.ensureJob('ids', 'app')
    expect(
      await s.saveIdMappings('ids', 'user', [
        { legacyId: '1', platformId: 'alice' },
        { legacyId: '2', platformId: 'bob' },
      ]),
    ).toEqual([])
    const conflicts = await s.saveIdMappings('ids', 'user', [
      { legacyId: '3', platformId: 'alice' },
      { legacyId: '1', platformId: 'alice' },
      { legacyId: '2', platformId: 'robert' },
    ])
    expect(conflicts).toEqual([
      { legacyId: '3', platformId: 'alice' },
      { legacyId: '2', platformId: 'robert' },
    ])
    expect(Object.fromEntries(await s.lookupIds('ids', 'user', ['1', '2', '3']))).toEqual({ 1: 'alice', 2: 'bob' })
  })

  it('runs are recorded with mode, status and stats', async () => {
    const s = store()
    await s.ensureJob('runs', 'app')
    const id = await s.startRun('runs', 'plan', 'me')
    await s.finishRun(id, 'succeeded', { planned: 3 })
    const [run] = await s.listRuns('runs')
    expect(run).toMatchObject({ id, mode: 'plan', status: 'succeeded', stats: { planned: 3 } })
  })
})
