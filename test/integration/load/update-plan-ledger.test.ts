/**
 * `store.updatePlan` on Postgres and on the embedded PGlite store: intents recorded with their
 * policy's status, a newer planned intent of the same item and kind superseding the planned one
 * (a sent one left alone), reported changes counted once, and the key-set comparison of vanished
 * items (planned once, reported once, extras never), and the key reconciliation's comparison (the
 * source's keys the ledger holds no item of, in any status; on the same read as the vanished one)
 * with its count of deltas since the last one.
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { changeClassifier } from '../../../src/plan/change-classifier.ts'
import { ChangesSchema } from '../../../src/plan/changes-config.ts'
import type { UpdateTally } from '../../../src/plan/update-tally.ts'
import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { noUpdates } from '../../../src/state/update-plan-ledger.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { users } from '../../helpers/ledger-fixtures.ts'

const ledgers = useBothLedgers('cf_updplan')
const { stores } = ledgers

async function* pages(keys: readonly string[], size = 2): AsyncIterable<readonly string[]> {
  for (let i = 0; i < keys.length; i += size) {
    yield keys.slice(i, i + size)
  }
}

const rename = (n: number, name: string, policy: 'apply' | 'report' | 'ignore' = 'apply') => ({
  kind: 'user.update' as const,
  legacyId: `u${n}`,
  targetKey: `user-${n}`,
  body: { name },
  policy,
  reason: 'changed: name',
  payloadHash: `h-${name}`,
})

describe.each(stores)('store.updatePlan on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const rows = async (jobId: string) =>
    (
      await sql<{ kind: string; target_key: string; status: string; body: string }>`
        select kind, target_key, status, body from chatferry.updates where job_id = ${jobId} order by id`.execute(inspectLedger(store()))
    ).rows

  it('records each policy with its status; a newer planned intent supersedes the planned one, never a sent one', async () => {
    const s = store()
    await s.ensureJob('sup', 'app')
    expect(await s.updatePlan.record('sup', 'users', [rename(1, 'A')])).toMatchObject({ planned: 1, superseded: 0 })
    expect(await s.updatePlan.record('sup', 'users', [rename(1, 'B')])).toMatchObject({ planned: 1, superseded: 1 })
    expect((await rows('sup')).map((r) => [r.status, JSON.parse(r.body).name])).toEqual([
      ['superseded', 'A'],
      ['planned', 'B'],
    ])
    // The lane marks it sent: a newer change is planned after it, the sent one stays.
    await sql`update chatferry.updates set status = 'sent' where job_id = 'sup' and status = 'planned'`.execute(inspectLedger(s))
    expect(await s.updatePlan.record('sup', 'users', [rename(1, 'C')])).toMatchObject({ planned: 1, superseded: 0 })
    expect((await rows('sup')).map((r) => r.status)).toEqual(['superseded', 'sent', 'planned'])
    // Report and ignore are recorded once per item, kind and payload hash.
    expect(await s.updatePlan.record('sup', 'users', [rename(2, 'X', 'report'), rename(3, 'Y', 'ignore')])).toMatchObject({
      reported: 1,
      ignored: 1,
    })
    expect(await s.updatePlan.record('sup', 'users', [rename(2, 'X', 'report')])).toMatchObject({ reported: 0, repeated: 1 })
    const counts = await s.updatePlan.counts('sup')
    expect(Object.fromEntries(counts.map((c) => [`${c.kind} ${c.policy} ${c.status}`, c.n]))).toEqual({
      'user.update apply planned': 1,
      'user.update apply sent': 1,
      'user.update apply superseded': 1,
      'user.update report reported': 1,
      'user.update ignore ignored': 1,
    })
    const samples = await s.updatePlan.samples('sup', 1)
    expect(samples.find((x) => x.status === 'planned')).toMatchObject({ legacyId: 'u1', targetKey: 'user-1', reason: 'changed: name' })
  })

  it('finds done items the source no longer holds, plans a removal once and reports a vanished one once', async () => {
    const s = store()
    await s.ensureJob('van', 'app')
    await s.planItems('van', 'users', users(5))
    await s.planItems('van', 'users', [{ legacyId: '~placeholder:ghost', targetKey: 'ghost', payload: { uid: 'ghost', name: 'Ghost' } }])
    await sql`update chatferry.items set status = 'done', loaded_hash = payload_hash where job_id = 'van'`.execute(inspectLedger(s))
    const all = (
      await sql<{ legacy_id: string; target_key: string }>`
      select legacy_id, target_key from chatferry.items where job_id = 'van' and legacy_id not like '~%' order by legacy_id`.execute(inspectLedger(s))
    ).rows
    const kept = all.slice(2).map((r) => r.legacy_id)
    const decide = (policy: 'apply' | 'report') => (items: readonly { legacyId: string; targetKey: string }[]) =>
      items.map((i) => ({
        kind: 'user.deactivate' as const,
        legacyId: i.legacyId,
        targetKey: i.targetKey,
        body: {},
        policy,
        reason: 'vanished from the source',
      }))
    const first = await s.updatePlan.recordVanished('van', 'users', pages(kept.slice(1)), (items) => [
      ...decide('apply')(items.filter((i) => i.legacyId === all[0]!.legacy_id)),
      ...decide('report')(items.filter((i) => i.legacyId !== all[0]!.legacy_id)),
    ])
    // all[0], all[1] are gone from the source and kept[0] too; the placeholder is not a source row.
    expect(first).toMatchObject({ vanished: 3, planned: 1, reported: 2 })
    const again = await s.updatePlan.recordVanished('van', 'users', pages(kept.slice(1)), decide('apply'))
    expect(again).toMatchObject({ vanished: 0, planned: 0 })
    // A source that lost most of its rows: the gate sees the counts first, and refuses.
    let seen: [number, number] | undefined
    const refused = await s.updatePlan.recordVanished('van', 'users', pages([]), decide('apply'), (gone, loaded) => {
      seen = [gone, loaded]
      return false
    })
    expect(refused).toMatchObject({ refused: true, vanished: 2, loaded: 4, planned: 0 })
    expect(seen).toEqual([2, 4])
    const marked = await sql<{ target_key: string }>`
      select target_key from chatferry.items where job_id = 'van' and vanished_at is not null`.execute(inspectLedger(s))
    expect(marked.rows.map((r) => r.target_key)).toEqual([all[0]!.target_key])
  })

  it('the key reconciliation: source keys with no item in any status, alone or on the vanished read; the deltas since the last one', async () => {
    const s = store()
    await s.ensureJob('rec', 'app')
    const item = (n: number) => ({ legacyId: `m${n}`, targetKey: `msg-${n}`, payload: { muid: `msg-${n}` } })
    await s.planItems('rec', 'messages', [item(1), item(2), item(3)])
    await sql`update chatferry.items set status = 'done', loaded_hash = payload_hash where job_id = 'rec' and legacy_id = 'm1'`.execute(
      inspectLedger(s),
    )
    await s.skipItems('rec', 'messages', [{ legacyId: 'm4', reason: 'policy:retention' }])
    await s.rejectItems('rec', 'messages', [{ legacyId: 'm5', code: 'MAPPING_INVALID', message: 'text: too long' }])
    // Another job's item of the same legacy id is no item of this job; a users item is no message.
    await s.ensureJob('other', 'app2')
    await s.planItems('other', 'messages', [item(6)])
    await s.planItems('rec', 'users', [{ legacyId: 'm7', targetKey: 'user-7', payload: { uid: 'user-7' } }])
    const source = ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'm7', 'm8']
    const alone = await s.updatePlan.compareKeys('rec', 'messages', pages(source), { unplanned: true })
    expect(alone).toEqual({ vanished: undefined, unplanned: ['m6', 'm7', 'm8'] })
    // On one read with the vanished comparison: m1 (done) gone from the source is found too.
    const both = await s.updatePlan.compareKeys('rec', 'messages', pages(['m2', 'm9']), { unplanned: true, vanished: { decide: () => [] } })
    expect(both.unplanned).toEqual(['m9'])
    expect(both.vanished).toMatchObject({ vanished: 1, loaded: 1, refused: false })
    expect(await s.updatePlan.compareKeys('rec', 'messages', pages(source), {})).toEqual({ vanished: undefined, unplanned: [] })

    expect(await s.updatePlan.deltasSinceReconciliation('rec')).toBe(0)
    await s.updatePlan.recordDeltasSinceReconciliation('rec', 3)
    expect(await s.updatePlan.deltasSinceReconciliation('rec')).toBe(3)
    expect(await s.updatePlan.deltasSinceReconciliation('other')).toBe(0)
    // Its row is no entity's cursor.
    expect(await s.getCursor('rec', 'messages')).toBeUndefined()
  })

  it('planning a changed done item: an applied change advances the payload, a newer one supersedes it, a reported one is kept and applied once its policy is apply', async () => {
    const s = store()
    await s.ensureJob('plan', 'app')
    const user = (name: string) => ({ legacyId: 'u9', targetKey: 'user-9', payload: { uid: 'user-9', name } })
    await s.planItems('plan', 'users', [user('Ann')])
    await sql`update chatferry.items set status = 'done', loaded_hash = payload_hash where job_id = 'plan'`.execute(inspectLedger(s))
    const plan = async (name: string, users: 'apply' | 'report') => {
      const tally: UpdateTally = {}
      const recorded = noUpdates()
      const classify = changeClassifier('users', { changes: ChangesSchema.parse({ users }), deletesMode: 'skip', metadataKey: 'legacy' }, tally)
      const counts = await s.planPage('plan', 'users', { items: [user(name)], changes: { classify, recorded } })
      const item = await sql<{ name: string; payload_hash: string; loaded_hash: string }>`
        select (payload::jsonb)->>'name' as name, payload_hash, loaded_hash from chatferry.items where job_id = 'plan'`.execute(inspectLedger(s))
      return { counts, recorded, tally, item: item.rows[0]! }
    }
    const reported = await plan('Anne', 'report')
    expect(reported.recorded).toMatchObject({ reported: 1, planned: 0 })
    // Only reported: the platform still has Ann, and so does the ledger.
    expect(reported.item.name).toBe('Ann')
    expect(reported.item.payload_hash).toBe(reported.item.loaded_hash)
    // Seen again: counted by the plan, recorded once.
    expect((await plan('Anne', 'report')).recorded).toMatchObject({ reported: 0, repeated: 1 })
    // The policy becomes apply: the change the platform never got is planned, against what it has.
    const applied = await plan('Anne', 'apply')
    expect(applied.recorded).toMatchObject({ planned: 1 })
    expect(applied.item.name).toBe('Anne')
    expect(applied.item.payload_hash).not.toBe(applied.item.loaded_hash)
    // The same source row again: nothing new to apply.
    expect((await plan('Anne', 'apply')).recorded).toMatchObject({ planned: 0, reported: 0, repeated: 0 })
    // A newer rename before the lane sent the first: the planned one is superseded.
    const newer = await plan('Anna', 'apply')
    expect(newer.recorded).toMatchObject({ planned: 1, superseded: 1 })
    const rows = await sql<{ status: string; body: string; payload_hash: string | null }>`
      select status, body, payload_hash from chatferry.updates where job_id = 'plan' order by id`.execute(inspectLedger(s))
    expect(rows.rows.map((r) => [r.status, JSON.parse(r.body).name])).toEqual([
      ['reported', 'Anne'],
      ['superseded', 'Anne'],
      ['planned', 'Anna'],
    ])
    // The planned intent brings the platform to the stored payload's hash.
    expect(rows.rows[2]?.payload_hash).toBe(newer.item.payload_hash)
  })
})
