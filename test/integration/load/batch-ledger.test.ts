/**
 * The loader's ledger operations (store.batches), on Postgres and on the embedded PGlite store:
 * packing, claiming with fresh tokens (the one lease mechanism, src/state/lease-units.ts: oldest
 * first, never a batch under a live lease, disjoint between concurrent claimers), fencing (a
 * taken-over claim records nothing), renewing, splitting, releasing (claimable again after the
 * retry delay), taking over.
 */
import { describe, expect, it } from 'vitest'

import type { BatchReport, ClaimedBatch, ItemSettlement } from '../../../src/state/batch-ledger.ts'
import type { LedgerStore } from '../../../src/state/store.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { messages, users } from '../../helpers/ledger-fixtures.ts'

const ledgers = useBothLedgers('cf_batches')
const { stores } = ledgers

const report = (b: ClaimedBatch): BatchReport => ({
  batchId: b.id,
  token: b.token,
  requests: 1,
  rateLimited: 0,
  firstSentAt: Date.now(),
  lastStatus: 200,
  lastLatencyMs: 5,
  lastRetryAfterMs: undefined,
})

describe.each(stores)('batch ledger on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const batches = () => store().batches
  const counts = async (jobId: string) => {
    const s = (await store().entityStats(jobId)).find((e) => e.entity === 'users')
    return { planned: s?.planned, sent: s?.sent, done: s?.done, rejected: s?.rejected }
  }
  /** A job with `n` planned users, packed into batches of 50 (up to `depth`); returns their ids. */
  async function packed(jobId: string, n: number, depth = 10): Promise<number[]> {
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(n))
    await batches().pack(jobId, { depth, itemsPerRequest: 50 })
    return (await batches().claim({ jobId, owner: 'h/0/pack', leaseSeconds: 0, limit: 100 })).map((b) => b.id)
  }
  const claim = (jobId: string, limit = 100, owner = 'h/1/a', leaseSeconds = 60) => batches().claim({ jobId, owner, leaseSeconds, limit })
  /** Takes the batches over from their holder (as the takeover of a dead holder does), then claims them for `owner`. */
  const takeOver = async (jobId: string, ids: number[], owner: string) => {
    await batches().expireLeases(ids)
    return claim(jobId, 100, owner)
  }

  it('packs full batches up to the depth, in order, and marks their items sent', async () => {
    const ids = await packed('pack', 120, 2)
    expect(ids).toHaveLength(2)
    expect(ids[1]).toBeGreaterThan(ids[0] as number)
    expect(await counts('pack')).toEqual({ planned: 20, sent: 100, done: 0, rejected: 0 })
    // The depth is reached: nothing more is packed.
    expect(await batches().pack('pack', { depth: 2, itemsPerRequest: 50 })).toEqual({ batches: 0, agedOut: 0 })
    const [a] = await claim('pack', 1)
    expect(a?.id).toBe(ids[0])
    expect(a?.items.map((i) => i.key)).toEqual(users(50).map((u) => u.targetKey))
  })

  it('claims oldest first, never a batch under a live lease, and concurrent claimers get disjoint batches', async () => {
    const ids = await packed('claims', 500, 10)
    expect(ids).toHaveLength(10)
    const [first] = await claim('claims', 1)
    expect(first?.id).toBe(ids[0])
    // Eight claimers at once (each with its own connection on Postgres): every batch once, none twice.
    const got = await Promise.all(Array.from({ length: 8 }, (_, i) => claim('claims', 2, `h/${10 + i}/x`)))
    const claimed = got.flat().map((b) => b.id)
    expect(new Set(claimed).size).toBe(claimed.length)
    expect(claimed.sort((x, y) => x - y)).toEqual(ids.slice(1))
    expect(await claim('claims', 10)).toEqual([])
    const leased = await batches().leased('claims')
    expect(leased).toHaveLength(10)
  })

  it('renews only the leases still held under their token', async () => {
    const [id] = await packed('renew', 3)
    const [held] = await claim('renew')
    expect([...(await batches().renew([{ batchId: id as number, token: held!.token }], 60))]).toEqual([id])
    const [next] = await takeOver('renew', [id as number], 'h/2/b')
    // The first holder's renewal finds its token replaced: the lease is not revived.
    expect([...(await batches().renew([{ batchId: id as number, token: held!.token }], 60))]).toEqual([])
    expect([...(await batches().renew([{ batchId: id as number, token: next!.token }], 60))]).toEqual([id])
  })

  it('packing with an age-out rule skips the messages sent before it, with the reason, and packs the rest', async () => {
    await store().ensureJob('aged', 'app')
    // 120 messages at sentAt 1000..1119; the rule skips those before 1070. One old message holds
    // the JSON escape \u0000, which Postgres cannot read as jsonb: it is left to be sent.
    const msgs = messages(120, 3, 'm', 1000)
    ;(msgs[3]!.payload as { data: { text: string } }).data.text = 'nul \u0000 here'
    await store().planItems('aged', 'messages', msgs)
    const result = await batches().pack('aged', { depth: 10, itemsPerRequest: 50, ageOut: { sentBefore: 1070, reason: 'policy:retention: too old' } })
    expect(result).toEqual({ batches: 2, agedOut: 69 })
    const s = (await store().entityStats('aged')).find((e) => e.entity === 'messages')
    expect(s).toMatchObject({ skipped: 69, sent: 51, planned: 0 })
    const claimed = await claim('aged')
    const keys = claimed.flatMap((b) => b.items.map((i) => i.key)).sort()
    expect(keys).toEqual(['m3', ...Array.from({ length: 50 }, (_, i) => `m${70 + i}`)].sort())
  })

  it("packing reads a message's sentAt from its sort key, which a refused payload planned again carries too", async () => {
    await store().ensureJob('aged-keys', 'app')
    // Planned in the window (sentAt and sort key 2000 and 2001), then refused with a payload of an
    // older time, then planned again (`verify --replan`): the old m0 has aged out by its own time;
    // the fresh m1 is packed without its payload being read.
    const [m0, m1] = messages(2, 3, 'm', 2000).map((m) => ({ ...m, sortKey: (m.payload as { sentAt: number }).sentAt }))
    await store().planItems('aged-keys', 'messages', [m0!, m1!])
    await store().rejectItems('aged-keys', 'messages', [
      {
        legacyId: m0!.legacyId,
        targetKey: m0!.targetKey,
        code: 'MAPPING_INVALID',
        message: 'x',
        payload: { ...(m0!.payload as object), sentAt: 1000 },
      },
    ])
    expect(await store().replanItems('aged-keys', 'messages', [m0!.targetKey])).toBe(1)
    const result = await batches().pack('aged-keys', {
      depth: 10,
      itemsPerRequest: 50,
      ageOut: { sentBefore: 1500, reason: 'policy:retention: too old' },
    })
    expect(result).toEqual({ batches: 1, agedOut: 1 })
    const claimed = await claim('aged-keys')
    expect(claimed.flatMap((b) => b.items.map((i) => i.key))).toEqual([m1!.targetKey])
  })

  it('a claim taken over records nothing; the new holder settles', async () => {
    const [id] = await packed('fence', 3)
    const [first] = await claim('fence', 1, 'h/1/a')
    const [second] = await takeOver('fence', [id as number], 'h/2/b')
    expect(second?.token).not.toBe(first?.token)
    const fates = (b: ClaimedBatch): ItemSettlement[] => [
      { id: b.items[0]!.id, status: 'done', doneReason: 'created', code: null, message: null, hash: b.items[0]!.hash },
      { id: b.items[1]!.id, status: 'rejected', doneReason: null, code: 'ERR_X', message: 'bad', hash: b.items[1]!.hash },
      { id: b.items[2]!.id, status: 'planned', doneReason: null, code: null, message: null, hash: b.items[2]!.hash },
    ]
    const stale = await batches().settle('fence', [{ report: report(first!), items: fates(first!) }])
    expect([...stale]).toEqual([])
    expect(await batches().release(report(first!), { code: 'X', message: 'x' })).toBe(false)
    expect(await counts('fence')).toEqual({ planned: 0, sent: 3, done: 0, rejected: 0 })

    const settled = await batches().settle('fence', [{ report: report(second!), items: fates(second!) }])
    expect([...settled]).toEqual([id])
    expect(await counts('fence')).toEqual({ planned: 1, sent: 0, done: 1, rejected: 1 })
    await batches().expireLeases([id as number])
    expect(await claim('fence')).toEqual([])
  })

  it('splits a batch in halves that hold its items, or rejects a single item', async () => {
    const [id] = await packed('split', 5)
    const [b] = await claim('split')
    expect(b?.id).toBe(id)
    const ok = await batches().split(
      'split',
      { report: report(b!), entity: 'users', keys: b!.items.map((i) => i.key) },
      { code: 'ERR_EXCEPTION', message: 'boom' },
    )
    expect(ok).toBe(true)
    const parts = await claim('split')
    expect(parts.map((p) => p.items.length).sort()).toEqual([2, 3])
    expect(parts.every((p) => p.id > (id as number))).toBe(true)

    await packed('split1', 1)
    const [one] = await claim('split1')
    await batches().split('split1', { report: report(one!), entity: 'users', keys: ['u0'] }, { code: 'ERR_EXCEPTION', message: 'boom' })
    expect(await claim('split1')).toEqual([])
    expect(await counts('split1')).toEqual({ planned: 0, sent: 0, done: 0, rejected: 1 })
  })

  it('isolates a read-back batch in one fenced step: found rows done, suspects in batches of their own, the rest planned again', async () => {
    const [id] = await packed('iso', 8)
    const [stale] = await claim('iso', 1, 'h/1/a')
    const [b] = await takeOver('iso', [id as number], 'h/2/b')
    const keys = b!.items.map((i) => i.key)
    const landed = (c: ClaimedBatch): ItemSettlement[] =>
      c.items
        .slice(0, 2)
        .map((i) => ({ id: i.id, status: 'done', doneReason: 'created', code: null, message: null, hash: i.hash, platformId: `p-${i.key}` }))
    const rows = (c: ClaimedBatch) => ({
      landed: landed(c),
      alone: [keys[2]!, keys[5]!],
      together: [keys[3]!, keys[4]!],
      again: [keys[6]!, keys[7]!],
    })
    const error = { code: 'BAD_ROW_ISOLATION', message: 'read back: 2 written' }
    // The stale holder's lease was taken over: it records nothing.
    expect(await batches().isolate('iso', { report: report(stale!), entity: 'users' }, rows(stale!), error)).toBe(false)
    expect(await counts('iso')).toEqual({ planned: 0, sent: 8, done: 0, rejected: 0 })

    expect(await batches().isolate('iso', { report: report(b!), entity: 'users' }, rows(b!), error)).toBe(true)
    expect(await counts('iso')).toEqual({ planned: 2, sent: 4, done: 2, rejected: 0 })
    const parts = await claim('iso')
    expect(parts.map((p) => p.items.map((i) => i.key))).toEqual([[keys[2]], [keys[5]], [keys[3], keys[4]]])
    // Each knows it was isolated from the batch (a 500 to a suspect alone is the platform's word about it).
    expect(parts.map((p) => p.parentCode)).toEqual(['BAD_ROW_ISOLATION', 'BAD_ROW_ISOLATION', 'BAD_ROW_ISOLATION'])
    expect(await claim('iso')).toEqual([])
  })

  it('a release keeps the items sent and the batch open: claimable again after the retry delay', async () => {
    const [id] = await packed('release', 4)
    const [b] = await claim('release')
    expect(await batches().release(report(b!), { code: 'HTTP_503', message: 'down' })).toBe(true)
    expect(await counts('release')).toEqual({ planned: 0, sent: 4, done: 0, rejected: 0 })
    expect(await claim('release')).toEqual([])
    await new Promise((resolve) => setTimeout(resolve, 1100))
    const [again] = await claim('release')
    expect(again?.id).toBe(id)
    expect(again?.items).toHaveLength(4)
  })

  it('takes over leases: lists the held ones with their holder, and ends them', async () => {
    const [id] = await packed('leases', 2)
    await claim('leases', 1, 'host#boot/4242/abcd')
    expect(await batches().leased('leases')).toEqual([{ id, leaseOwner: 'host#boot/4242/abcd' }])
    await batches().expireLeases([id as number])
    expect(await batches().leased('leases')).toEqual([])
    expect((await claim('leases', 1, 'host#boot/7/new')).map((b) => b.id)).toEqual([id])
  })

  it('is drained when nothing is planned or sent', async () => {
    await store().ensureJob('drained', 'app')
    expect(await batches().drained('drained')).toBe(true)
    await store().planItems('drained', 'users', users(1))
    expect(await batches().drained('drained')).toBe(false)
  })
})
