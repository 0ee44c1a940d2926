/**
 * The update lane's ledger operations (store.updateLane), on Postgres and on the embedded PGlite
 * store: claims in id order, one update of an item at a time, leases that fence a lost holder out,
 * `sent` before the call, a crashed holder's `sent` update handed to the next one *as sent* (so it
 * is checked before anything is sent again), `loaded_hash` once every update of the item is done,
 * rejects with their code, and the platform id a message import answer carries (items.platform_id).
 */
import { sql } from 'kysely'
import { describe, expect, it } from 'vitest'

import { inspectLedger } from '../../../src/state/inspect-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import type { UpdateIntent } from '../../../src/state/update-plan-ledger.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'

const ledgers = useBothLedgers('cf_updlane')
const { stores } = ledgers

const intent = (o: Partial<UpdateIntent> & Pick<UpdateIntent, 'kind' | 'targetKey'>): UpdateIntent => ({
  legacyId: o.targetKey,
  body: {},
  policy: 'apply',
  reason: 'test',
  payloadHash: 'h-new',
  ...o,
})

describe.each(stores)('update lane ledger on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const lane = () => store().updateLane
  const db = () => inspectLedger(store())
  const statusOf = async (jobId: string) =>
    (
      await sql<{ target_key: string; kind: string; status: string; attempts: number; error_code: string | null }>`
        select target_key, kind, status, attempts, error_code from chatferry.updates where job_id = ${jobId} order by id`.execute(db())
    ).rows
  const loadedHash = async (jobId: string, key: string) =>
    (await sql<{ h: string | null }>`select loaded_hash as h from chatferry.items where job_id = ${jobId} and target_key = ${key}`.execute(db()))
      .rows[0]?.h

  /** A job whose users u0…u(n-1) are loaded (done, loaded_hash h-old). */
  async function loadedUsers(jobId: string, n: number): Promise<void> {
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(n))
    await sql`update chatferry.items set status = 'done', loaded_hash = 'h-old' where job_id = ${jobId}`.execute(db())
  }

  it('claims oldest first, one update of an item at a time, under a lease that fences other holders out', async () => {
    await loadedUsers('order', 2)
    await store().updatePlan.record('order', 'users', [
      intent({ kind: 'user.update', targetKey: 'u0', body: { name: 'Zero' } }),
      intent({ kind: 'user.deactivate', targetKey: 'u0' }),
      intent({ kind: 'user.update', targetKey: 'u1', body: { name: 'One' } }),
    ])
    const a = await lane().claim({ jobId: 'order', owner: 'h/1/a', leaseSeconds: 60, limit: 10 })
    // u0's deactivation waits for its rename.
    expect(a.map((u) => [u.targetKey, u.kind, u.status])).toEqual([
      ['u0', 'user.update', 'planned'],
      ['u1', 'user.update', 'planned'],
    ])
    expect(JSON.parse(a[0]!.body)).toEqual({ name: 'Zero' })
    // Held: nobody else gets them, nor the update queued behind one of them.
    expect(await lane().claim({ jobId: 'order', owner: 'h/2/b', leaseSeconds: 60, limit: 10 })).toEqual([])
    expect(await lane().markSent(a[0]!.id, 'h/2/b', 60)).toBe(false)
    expect(await lane().markSent(a[0]!.id, 'h/1/a', 60)).toBe(true)
    expect(await lane().done(a[0]!.id, 'h/2/b', 200)).toBe(false)
    expect(await lane().done(a[0]!.id, 'h/1/a', 200)).toBe(true)
    // Not loaded unchanged yet: its deactivation (same payload hash) is still to come.
    expect(await loadedHash('order', 'u0')).toBe('h-old')
    const b = await lane().claim({ jobId: 'order', owner: 'h/2/b', leaseSeconds: 60, limit: 10 })
    expect(b.map((u) => [u.targetKey, u.kind])).toEqual([['u0', 'user.deactivate']])
    expect(await lane().markSent(b[0]!.id, 'h/2/b', 60)).toBe(true)
    expect(await lane().done(b[0]!.id, 'h/2/b', 200)).toBe(true)
    expect(await loadedHash('order', 'u0')).toBe('h-new')
    expect(await lane().drained('order')).toBe(false)
    expect(await lane().reject(a[1]!.id, 'h/1/a', { code: 'ERR_BAD', message: 'bad name', httpStatus: 400 })).toBe(true)
    expect(await lane().drained('order')).toBe(true)
    expect(await loadedHash('order', 'u1')).toBe('h-old')
    expect(await lane().rejects('order')).toMatchObject([
      { entity: 'users', kind: 'user.update', legacyId: 'u1', targetKey: 'u1', code: 'ERR_BAD', message: 'bad name', httpStatus: 400 },
    ])
    expect(await lane().retryRejected('order')).toBe(1)
    expect((await statusOf('order')).map((r) => r.status)).toEqual(['done', 'done', 'planned'])
  })

  it('an update left sent by a dead holder comes back as sent (to be checked); one handed back unsent comes back planned', async () => {
    await loadedUsers('crash', 3)
    await store().updatePlan.record('crash', 'users', [
      intent({ kind: 'user.update', targetKey: 'u0', body: { name: 'Zero' } }),
      intent({ kind: 'user.update', targetKey: 'u1', body: { name: 'One' } }),
      intent({ kind: 'user.update', targetKey: 'u2', body: { name: 'Two' } }),
    ])
    const [u0, u1, u2] = await lane().claim({ jobId: 'crash', owner: 'me/999999/x', leaseSeconds: 60, limit: 10 })
    expect(await lane().markSent(u0!.id, 'me/999999/x', 60)).toBe(true)
    // A timeout: handed back still sent, its lease ended.
    expect(
      await lane().release(u1!.id, 'me/999999/x', { ambiguous: true, countAttempt: true, code: 'TIMEOUT', message: 't', httpStatus: null }),
    ).toBe(true)
    // Stopped before the call: planned again, no attempt counted.
    expect(await lane().release(u2!.id, 'me/999999/x', { ambiguous: false, countAttempt: false, code: null, message: null, httpStatus: null })).toBe(
      true,
    )
    // u0's holder "died": its lease is found and ended.
    const leased = await lane().leased('crash')
    expect(leased).toEqual([{ id: u0!.id, leaseOwner: 'me/999999/x' }])
    await lane().expireLeases(leased.map((l) => l.id))
    const next = await lane().claim({ jobId: 'crash', owner: 'h/2/b', leaseSeconds: 60, limit: 10 })
    expect(next.map((u) => [u.targetKey, u.status])).toEqual([
      ['u0', 'sent'],
      ['u1', 'sent'],
      ['u2', 'planned'],
    ])
    expect((await statusOf('crash')).map((r) => r.attempts)).toEqual([0, 1, 0])
    // The dead holder cannot settle any more.
    expect(await lane().done(u0!.id, 'me/999999/x', 200)).toBe(false)
  })

  it("a user's deactivation waits for the planned updates of that user's memberships and messages", async () => {
    await loadedUsers('deact', 1)
    await store().updatePlan.record('deact', 'users', [intent({ kind: 'user.deactivate', targetKey: 'u0' })])
    await store().updatePlan.record('deact', 'members', [
      intent({ kind: 'member.kick', targetKey: 'g1_member_u0' }),
      intent({ kind: 'member.kick', targetKey: 'g1_member_xu0' }),
    ])
    await store().updatePlan.record('deact', 'messages', [intent({ kind: 'message.delete', targetKey: 'm7', body: { sender: 'u0' } })])
    const first = await lane().claim({ jobId: 'deact', owner: 'h/1/a', leaseSeconds: 60, limit: 10 })
    expect(first.map((u) => [u.kind, u.targetKey])).toEqual([
      ['member.kick', 'g1_member_u0'],
      ['member.kick', 'g1_member_xu0'],
      ['message.delete', 'm7'],
    ])
    expect(await lane().done(first[2]!.id, 'h/1/a', 200)).toBe(true)
    // Once u0's own kick and its message's deletion are done, the deactivation goes, though xu0's kick (another user) is still open.
    expect(await lane().done(first[0]!.id, 'h/1/a', 200)).toBe(true)
    const next = await lane().claim({ jobId: 'deact', owner: 'h/1/a', leaseSeconds: 60, limit: 10 })
    expect(next.map((u) => [u.kind, u.targetKey])).toEqual([['user.deactivate', 'u0']])
  })

  it('a lease that ran out is taken over: the old holder can neither send nor settle', async () => {
    await loadedUsers('expiry', 1)
    await store().updatePlan.record('expiry', 'users', [intent({ kind: 'user.update', targetKey: 'u0', body: { name: 'Zero' } })])
    const [u] = await lane().claim({ jobId: 'expiry', owner: 'h/1/a', leaseSeconds: 1, limit: 1 })
    await new Promise((r) => setTimeout(r, 1200))
    const [taken] = await lane().claim({ jobId: 'expiry', owner: 'h/2/b', leaseSeconds: 60, limit: 1 })
    expect(taken?.id).toBe(u!.id)
    expect(await lane().markSent(u!.id, 'h/1/a', 60)).toBe(false)
    expect(await lane().reject(u!.id, 'h/1/a', { code: 'X', message: 'x', httpStatus: 400 })).toBe(false)
  })

  it('records a message platform id from its import answer; a claim carries it, or the payload to look it up by', async () => {
    const jobId = 'pid'
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'messages', messages(2, 2))
    await store().batches.pack(jobId, { depth: 1, itemsPerRequest: 50 })
    const [batch] = await store().batches.claim({ jobId, owner: 'h/1/a', leaseSeconds: 60, limit: 1 })
    const settled = await store().batches.settle(jobId, [
      {
        report: {
          batchId: batch!.id,
          token: batch!.token,
          requests: 1,
          rateLimited: 0,
          firstSentAt: Date.now(),
          lastStatus: 200,
          lastLatencyMs: 1,
          lastRetryAfterMs: undefined,
        },
        items: batch!.items.map((i, n) => ({
          id: i.id,
          status: 'done' as const,
          doneReason: n === 0 ? ('created' as const) : ('already_present' as const),
          code: null,
          message: null,
          hash: i.hash,
          ...(n === 0 ? { platformId: '4711' } : {}),
        })),
      },
    ])
    expect(settled.size).toBe(1)
    await store().updatePlan.record(jobId, 'messages', [
      intent({ kind: 'message.edit', targetKey: 'm0', body: { sender: 'u0', text: 'x' } }),
      intent({ kind: 'message.edit', targetKey: 'm1', body: { sender: 'u1', text: 'y' } }),
    ])
    const claimed = await lane().claim({ jobId, owner: 'h/1/a', leaseSeconds: 60, limit: 10 })
    expect(claimed.map((u) => [u.targetKey, u.platformId, u.itemPayload === null])).toEqual([
      ['m0', '4711', true],
      ['m1', null, false],
    ])
    expect(JSON.parse(claimed[1]!.itemPayload!)).toMatchObject({ muid: 'm1', sender: 'u1' })
    await lane().recordPlatformId(jobId, 'messages', 'm1', '4712')
    const ids = (
      await sql<{
        k: string
        p: string | null
      }>`select target_key as k, platform_id as p from chatferry.items where job_id = ${jobId} order by k`.execute(db())
    ).rows
    expect(ids).toEqual([
      { k: 'm0', p: '4711' },
      { k: 'm1', p: '4712' },
    ])
  })
})
