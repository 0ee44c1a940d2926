/**
 * `files.rewriteTextLinks` at the ledger (issue 27), on Postgres and on the embedded PGlite store:
 * a claimed message's text has the legacy URLs of files copied in this job — its own and another
 * message's — replaced by the store's, sentence punctuation kept; a failed file's URL and a URL
 * that is no file stay; a text the longer URL would take over the 10 KB of `data` goes unchanged
 * and is counted; without the option nothing in the text changes; the stored payload stays the
 * planned one; verify's lookup finds the same links.
 */
import { describe, expect, it } from 'vitest'

import type { ClaimedBatch } from '../../../src/state/batch-ledger.ts'
import type { LedgerStore, PlannedItem } from '../../../src/state/store.ts'
import { LIMITS } from '../../../src/target/schemas.ts'
import { useBothLedgers } from '../../helpers/both-ledgers.ts'
import { users } from '../../helpers/ledger-fixtures.ts'

const { stores } = useBothLedgers('cf_files_text_links')

const base = Math.floor(Date.now() / 1000) - 86_400
const A = 'http://files.test/a.png'
const B = 'http://files.test/b.png'
const C = 'http://files.test/c.png'
const cdn = (n: number) => `https://cdn.example/sha256/${n}.png`

/** A message with this text and attachments at these URLs, its files recorded under `rehost`. */
function message(i: number, text: string, urls: readonly string[]): PlannedItem {
  const name = (url: string) => url.split('/').pop() as string
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
      data: { text, ...(urls.length > 0 ? { attachments: urls.map((url) => ({ url, name: name(url), mimeType: 'image/png' })) } : {}) },
      sentAt: base + i,
    },
    ...(urls.length > 0
      ? {
          files: urls.map((url) => ({
            locator: { reader: 'http', ref: url, host: 'files.test' },
            url,
            name: name(url),
            size: 10,
            type: 'image/png',
          })),
        }
      : {}),
  }
}

/** m1 names its own file, another message's copied file (in brackets, then a full stop), a failed file and a URL that is no file. */
const TEXT_1 = `mine ${A}, theirs (${B}). failed ${C} and https://elsewhere.test/x.png`
/** Just under the 10 KB of `data` with the legacy URL, over it with the public one. */
const LONG = `${'x'.repeat(LIMITS.MESSAGE_DATA_BYTES_MAX - '{"text":""}'.length - B.length - 3)} ${B}`

describe.each(stores)('text links on $name', (entry) => {
  const store = () => entry.store as LedgerStore

  /** A job whose users are loaded and whose files a.png and b.png are copied, c.png failed under link-original. */
  async function job(jobId: string): Promise<void> {
    await store().ensureJob(jobId, 'app')
    await store().planItems(jobId, 'users', users(2))
    await store().planPage(jobId, 'messages', {
      items: [message(1, TEXT_1, [A]), message(2, 'b', [B]), message(3, 'c', [C]), message(4, LONG, []), message(5, `only ${B}`, [])],
    })
    await store().batches.pack(jobId, { depth: 10, itemsPerRequest: 50 })
    const [u] = await store().batches.claim({ jobId, owner: 'h/1', leaseSeconds: 60, limit: 10 })
    expect(u?.entity).toBe('users')
    const report = { batchId: u!.id, token: u!.token, requests: 1, rateLimited: 0, firstSentAt: Date.now(), lastStatus: 200 }
    const items = u!.items.map((i) => ({
      id: i.id,
      status: 'done' as const,
      doneReason: 'created' as const,
      code: null,
      message: null,
      hash: i.hash,
    }))
    await store().batches.settle(jobId, [{ report: { ...report, lastLatencyMs: 1, lastRetryAfterMs: undefined }, items }])
    for (const c of await store().files.claim({ jobId, owner: 'h/2', leaseSeconds: 60, limit: 10 })) {
      const n = [A, B, C].indexOf(c.legacyUrl) + 1
      if (c.legacyUrl === C) {
        const failure = { cause: 'missing', reason: 'HTTP 404', retryable: false, retryAfterMs: 0, maxAttempts: 1, onFailure: 'link-original' }
        await store().files.failed(c, 'h/2', failure)
      } else {
        const copy = { bytes: 10, sha256: `${n}`.padStart(64, '0'), sniffedType: 'image/png', storeKey: `sha256/${n}.png`, publicUrl: cdn(n) }
        expect(await store().files.copied(c, 'h/2', copy)).toBe(true)
      }
    }
    await store().batches.pack(jobId, { depth: 10, itemsPerRequest: 50 })
  }

  const texts = (batches: readonly ClaimedBatch[]) =>
    new Map(batches.flatMap((b) => b.items.map((i) => [i.key, (JSON.parse(i.payload) as { data: { text: string } }).data.text])))

  it('rewrites the links to copied files in the texts of the claimed messages, and counts them', async () => {
    await job('on')
    const batches = await store().batches.claim({ jobId: 'on', owner: 'h/3', leaseSeconds: 60, limit: 10, rewriteTextLinks: true })
    const sent = texts(batches)
    expect(sent.get('m1')).toBe(`mine ${cdn(1)}, theirs (${cdn(2)}). failed ${C} and https://elsewhere.test/x.png`)
    expect(sent.get('m5')).toBe(`only ${cdn(2)}`)
    // Over the limit with the longer URL: sent as planned, counted.
    expect(sent.get('m4')).toBe(LONG)
    const counts = batches.reduce((t, b) => ({ rewritten: t.rewritten + b.textLinks.rewritten, overLimit: t.overLimit + b.textLinks.overLimit }), {
      rewritten: 0,
      overLimit: 0,
    })
    expect(counts).toEqual({ rewritten: 3, overLimit: 1 })
    // The attachments are rewritten as always; the ledger keeps the planned payload.
    const m1 = batches.flatMap((b) => b.items).find((i) => i.key === 'm1')!
    expect((JSON.parse(m1.payload) as { data: { attachments: { url: string }[] } }).data.attachments[0]?.url).toBe(cdn(1))
    const conversation = await store().verifyLookups.conversationMessages('on', 'u0_user_u1')
    const planned = conversation.find((r) => r.target_key === 'm1')?.payload
    expect((JSON.parse(planned ?? '{}') as { data?: { text: string } }).data?.text).toBe(TEXT_1)
  })

  it('leaves every text as planned without the option', async () => {
    await job('off')
    const batches = await store().batches.claim({ jobId: 'off', owner: 'h/3', leaseSeconds: 60, limit: 10 })
    const sent = texts(batches)
    expect(sent.get('m1')).toBe(TEXT_1)
    expect(sent.get('m5')).toBe(`only ${B}`)
    expect(batches.every((b) => b.textLinks.rewritten === 0 && b.textLinks.overLimit === 0)).toBe(true)
  })

  it("gives verify the copied files among a text's URLs, and nothing of another job", async () => {
    await job('lookup')
    const links = await store().verifyLookups.copiedFileLinks('lookup', [A, `${A}.`, B, C, 'https://elsewhere.test/x.png'])
    expect([...links.entries()].sort()).toEqual([
      [A, cdn(1)],
      [B, cdn(2)],
    ])
    expect((await store().verifyLookups.copiedFileLinks('nobody', [A])).size).toBe(0)
  })
})
