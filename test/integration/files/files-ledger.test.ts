/**
 * The files lane's ledger (store.files, issue 27), on Postgres and on the embedded PGlite store:
 * planning records a message's files once per job and links them in order; packing holds a
 * message until its files are settled and sends it with the store's URLs or under the failure
 * policy; claims are fenced leases; `prepare` reopens failed files under `wait` and skips planned
 * ones under another mode; a held message does not keep a `load` from ending.
 */
import { describe, expect, it } from 'vitest'

import type { ClaimedBatch } from '../../../src/state/batch-ledger.ts'
import type { LedgerStore, PlannedItem } from '../../../src/state/store.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { users } from '../../helpers/ledger-fixtures.ts'

const ledgers = useBothLedgers('cf_files_ledger')
const { stores } = ledgers

const base = Math.floor(Date.now() / 1000) - 86_400

/** A message with attachments at these URLs (read over HTTP), its files recorded under `rehost`. */
function message(i: number, urls: readonly string[]): PlannedItem {
  const attachments = urls.map((url) => ({ url, name: url.split('/').pop() as string, mimeType: 'image/png', extension: 'png', size: '10' }))
  return {
    legacyId: `m${i}`,
    targetKey: `m${i}`,
    sortKey: base + i,
    payload: {
      muid: `m${i}`,
      sender: 'u0',
      receiverType: 'user',
      receiver: 'u1',
      category: 'message',
      type: urls.length > 0 ? 'image' : 'text',
      data: { text: `hello ${i}`, ...(urls.length > 0 ? { attachments } : {}) },
      sentAt: base + i,
    },
    ...(urls.length > 0
      ? {
          files: urls.map((url) => ({
            locator: { reader: 'http', ref: url, host: new URL(url).host },
            url,
            name: url.split('/').pop() as string,
            size: 10,
            type: 'image/png',
          })),
        }
      : {}),
  }
}

const copy = (n: number) => ({
  bytes: 100 + n,
  sha256: `${n}`.padStart(64, '0'),
  sniffedType: 'image/png',
  storeKey: `sha256/${n}.png`,
  publicUrl: `https://cdn.example/sha256/${n}.png`,
})
const sized = (c: { storeKey: string; bytes: number }) => ({ storeKey: c.storeKey, bytes: c.bytes })

describe.each(stores)('files ledger on $name', (entry) => {
  const store = () => entry.store as LedgerStore
  const files = () => store().files

  async function job(jobId: string, items: PlannedItem[]): Promise<void> {
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(2))
    await store().planPage(jobId, 'messages', { items })
  }
  async function packMessages(jobId: string): Promise<ClaimedBatch[]> {
    await store().batches.pack(jobId, { depth: 10, itemsPerRequest: 50 })
    return store().batches.claim({ jobId, owner: 'h/1', leaseSeconds: 60, limit: 100 })
  }
  /** Packs and settles the users, so messages are the entity packed next. */
  async function settleUsers(jobId: string): Promise<void> {
    const [b] = await packMessages(jobId)
    expect(b?.entity).toBe('users')
    const report = {
      batchId: b!.id,
      token: b!.token,
      requests: 1,
      rateLimited: 0,
      firstSentAt: Date.now(),
      lastStatus: 200,
      lastLatencyMs: 1,
      lastRetryAfterMs: undefined,
    }
    const items = b!.items.map((i) => ({
      id: i.id,
      status: 'done' as const,
      doneReason: 'created' as const,
      code: null,
      message: null,
      hash: i.hash,
    }))
    await store().batches.settle(jobId, [{ report, items }])
  }

  it('records each distinct file once and links a message to its files in order', async () => {
    await job('plan', [message(1, ['http://files.test/a.png', 'http://files.test/b.png']), message(2, ['http://files.test/a.png']), message(3, [])])
    const list = await files().list('plan')
    expect(list.map((f) => [f.legacyUrl, f.state, f.messages])).toEqual([
      ['http://files.test/a.png', 'planned', 2],
      ['http://files.test/b.png', 'planned', 1],
    ])
    expect(list[0]?.locator).toEqual({ reader: 'http', ref: 'http://files.test/a.png', host: 'files.test' })
    // Planning the same page again records nothing new.
    await store().planPage('plan', 'messages', { items: [message(1, ['http://files.test/a.png', 'http://files.test/b.png'])] })
    expect((await files().list('plan')).length).toBe(2)
    expect((await files().counts('plan')).waitingMessages).toBe(2)
  })

  it('holds a message until its files are settled, then sends it with the store URLs', async () => {
    await job('hold', [message(1, ['http://files.test/a.png']), message(2, [])])
    await settleUsers('hold')
    const first = await packMessages('hold')
    expect(first.flatMap((b) => b.items.map((i) => i.key))).toEqual(['m2'])
    expect(await store().batches.drained('hold')).toBe(false)
    const [claim] = await files().claim({ jobId: 'hold', owner: 'h/2', leaseSeconds: 60, limit: 10 })
    expect(claim?.legacyUrl).toBe('http://files.test/a.png')
    expect(await files().copied(claim!, 'h/2', copy(1))).toBe(true)
    const [batch] = await packMessages('hold')
    const item = batch?.items[0]
    expect(item?.key).toBe('m1')
    const sent = JSON.parse(item!.payload) as { data: { attachments: { url: string; size: string; mimeType: string }[] } }
    expect(sent.data.attachments).toEqual([expect.objectContaining({ url: 'https://cdn.example/sha256/1.png', size: '101', mimeType: 'image/png' })])
    // The stored payload (and its hash, what deltas compare) is the planned one.
    expect(item?.hash).not.toBeNull()
    expect((await files().counts('hold')).copied).toBe(1)
  })

  it('fences a claim taken over after its lease ran out', async () => {
    await job('fence', [message(1, ['http://files.test/a.png'])])
    const [old] = await files().claim({ jobId: 'fence', owner: 'h/3', leaseSeconds: 0, limit: 1 })
    const [taken] = await files().claim({ jobId: 'fence', owner: 'h/4', leaseSeconds: 60, limit: 1 })
    expect(taken?.id).toBe(old?.id)
    expect(taken!.fence).toBeGreaterThan(old!.fence)
    expect(await files().copied(old!, 'h/3', copy(1))).toBe(false)
    expect(
      await files().failed(old!, 'h/3', { cause: 'missing', reason: 'x', retryable: false, retryAfterMs: 0, maxAttempts: 1, onFailure: 'wait' }),
    ).toBeUndefined()
    expect(await files().copied(taken!, 'h/4', copy(1))).toBe(true)
  })

  it('keeps a retryable failure planned after its backoff, and fails it when the attempts run out', async () => {
    await job('retry', [message(1, ['http://files.test/a.png'])])
    const failure = { cause: 'unavailable', reason: 'HTTP 503', retryable: true, retryAfterMs: 60_000, maxAttempts: 2, onFailure: 'wait' }
    const [c1] = await files().claim({ jobId: 'retry', owner: 'h/5', leaseSeconds: 60, limit: 1 })
    expect(await files().failed(c1!, 'h/5', failure)).toBe('planned')
    expect(await files().claim({ jobId: 'retry', owner: 'h/5', leaseSeconds: 60, limit: 1 })).toEqual([])
    expect((await files().list('retry'))[0]).toMatchObject({ state: 'planned', attempts: 1, lastErrorCause: 'unavailable' })
    // Without a backoff the file is claimed again at once, and the second failure is final.
    await job('retry0', [message(1, ['http://files.test/a.png'])])
    const quick = { ...failure, retryAfterMs: 0 }
    const [d1] = await files().claim({ jobId: 'retry0', owner: 'h/5', leaseSeconds: 60, limit: 1 })
    expect(await files().failed(d1!, 'h/5', quick)).toBe('planned')
    const [d2] = await files().claim({ jobId: 'retry0', owner: 'h/5', leaseSeconds: 60, limit: 1 })
    expect(await files().failed(d2!, 'h/5', quick)).toBe('failed')
    expect((await files().list('retry0'))[0]).toMatchObject({
      state: 'failed',
      attempts: 2,
      lastErrorCause: 'unavailable',
      lastErrorReason: 'HTTP 503',
    })
  })

  it('applies the failure policies: wait holds, link-original keeps the legacy URL, note names the file', async () => {
    for (const policy of ['wait', 'link-original', 'note'] as const) {
      const jobId = `policy-${policy}`
      await job(jobId, [message(1, ['http://files.test/gone.png', 'http://files.test/ok.png'])])
      await settleUsers(jobId)
      for (const c of await files().claim({ jobId, owner: 'h/6', leaseSeconds: 60, limit: 10 })) {
        if (c.legacyUrl.endsWith('gone.png')) {
          await files().failed(c, 'h/6', {
            cause: 'missing',
            reason: 'HTTP 404',
            retryable: false,
            retryAfterMs: 0,
            maxAttempts: 5,
            onFailure: policy,
          })
        } else {
          await files().copied(c, 'h/6', copy(2))
        }
      }
      const batches = await packMessages(jobId)
      if (policy === 'wait') {
        expect(batches).toEqual([])
        // Held by a failed file under wait: the load may end; status counts it as waiting.
        expect(await store().batches.drained(jobId)).toBe(true)
        expect(await files().counts(jobId)).toMatchObject({ failed: 1, failedWaiting: 1, waitingMessages: 1 })
        // A later run plans it again.
        expect(await files().prepare(jobId, { mode: 'rehost', onFailure: 'wait' })).toEqual({ reopened: 1, skipped: 0 })
        expect(await store().batches.drained(jobId)).toBe(false)
        continue
      }
      const sent = JSON.parse(batches[0]!.items[0]!.payload) as { type: string; data: { text: string; attachments?: { url: string }[] } }
      if (policy === 'link-original') {
        expect(sent.data.attachments?.map((a) => a.url)).toEqual(['http://files.test/gone.png', 'https://cdn.example/sha256/2.png'])
      } else {
        expect(sent.data.attachments?.map((a) => a.url)).toEqual(['https://cdn.example/sha256/2.png'])
        expect(sent.data.text).toBe('hello 1\n\n[file not migrated: gone.png]')
      }
    }
  })

  it('skips the planned files of a job run under another mode, so no message waits', async () => {
    await job('mode', [message(1, ['http://files.test/a.png'])])
    await settleUsers('mode')
    expect(await packMessages('mode')).toEqual([])
    expect(await files().prepare('mode', { mode: 'reference', onFailure: 'wait' })).toEqual({ reopened: 0, skipped: 1 })
    const [b] = await packMessages('mode')
    const sent = JSON.parse(b!.items[0]!.payload) as { data: { attachments: { url: string }[] } }
    expect(sent.data.attachments[0]?.url).toBe('http://files.test/a.png')
  })

  it('takes over the leases of dead holders at once', async () => {
    await job('dead', [message(1, ['http://files.test/a.png'])])
    await files().claim({ jobId: 'dead', owner: 'host/999999', leaseSeconds: 600, limit: 1 })
    expect(await files().leaseOwners('dead')).toEqual(['host/999999'])
    expect(await files().expireLeases('dead', ['host/999999'])).toBe(1)
    expect(await files().claim({ jobId: 'dead', owner: 'host/1', leaseSeconds: 60, limit: 1 })).toHaveLength(1)
  })

  it('answers "copied under this key" (dedupe from the ledger) and "a copy may be in the store unrecorded"', async () => {
    await job('doubt', [message(1, ['http://files.test/a.png', 'http://files.test/b.png'])])
    // Nothing claimed yet: nothing in doubt, nothing copied.
    expect(await files().inDoubt('doubt')).toBe(false)
    expect(await files().copiedUnderKeys('doubt', [copy(1)].map(sized))).toEqual([])
    // A first claim, held: its holder is alive, so it is not in doubt; its first fence is 1.
    const [a, b] = await files().claim({ jobId: 'doubt', owner: 'host/999998', leaseSeconds: 600, limit: 2 })
    expect([a!.fence, b!.fence]).toEqual([1, 1])
    expect(await files().inDoubt('doubt')).toBe(false)
    // Copied: the key is known with its size only, in its job only.
    expect(await files().copied(a!, 'host/999998', copy(1))).toBe(true)
    expect(await files().copiedUnderKeys('doubt', [copy(1), copy(2), { ...copy(1), bytes: copy(1).bytes + 1 }].map(sized))).toEqual([sized(copy(1))])
    expect(await files().copiedUnderKeys('retry', [copy(1)].map(sized))).toEqual([])
    // The holder dies before settling b: b is in doubt (its bytes may be in the store), and its next claim says so by its fence.
    await files().expireLeases('doubt', ['host/999998'])
    expect(await files().inDoubt('doubt')).toBe(true)
    const [again] = await files().claim({ jobId: 'doubt', owner: 'host/1', leaseSeconds: 60, limit: 1 })
    expect(again).toMatchObject({ id: b!.id, fence: 2 })
    expect(await files().copied(again!, 'host/1', copy(2))).toBe(true)
    expect(await files().inDoubt('doubt')).toBe(false)
  })
})
