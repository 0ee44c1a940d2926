/**
 * pagedList (src/report/paged-list.ts) and messageList (message-list.ts), both through readPage
 * (read-page.ts): every page read once in order; a page whose read failed
 * without an answer about it (reset connection, timeout, 5xx) is read again, up to four more
 * times; a final answer (4xx) is thrown at once. The budget here only makes the call: its pacing
 * and 429s are tested with the ledger in chat-budget's own tests.
 */
import { describe, expect, it } from 'vitest'

import type { ChatBudget } from '../../../src/load/chat-budget.ts'
import { messageList } from '../../../src/report/message-list.ts'
import { pagedList } from '../../../src/report/paged-list.ts'
import type { PlatformClient } from '../../../src/target/client.ts'
import { PlatformError } from '../../../src/target/errors.ts'
import type { ChatMessage } from '../../../src/target/schemas.ts'

const passThrough = { run: <T>(call: () => Promise<T>) => call() } as unknown as ChatBudget

const reset = () => new PlatformError({ operation: 'chat.listMessages', kind: 'network', code: 'NETWORK_ERROR', message: 'connection reset' })
const http = (status: number) =>
  new PlatformError({ operation: 'chat.listMessages', kind: 'http', status, code: `HTTP_${status}`, message: 'answered' })

/** Three pages of two items; `failures[page]` are thrown, one per read, before the page answers. */
function pages(failures: Record<number, PlatformError[]>) {
  const reads: number[] = []
  const fetchPage = async (page: number, perPage: number) => {
    reads.push(page)
    const failure = failures[page]?.shift()
    if (failure) {
      throw failure
    }
    return { data: [`${page}a`, `${page}b`].slice(0, perPage), meta: { pagination: { total_pages: 3, current_page: page } } }
  }
  return { reads, fetchPage }
}

async function all(fetchPage: Parameters<typeof pagedList<string>>[1]): Promise<string[]> {
  const out: string[] = []
  for await (const item of pagedList(passThrough, fetchPage, 2, undefined, 1)) {
    out.push(item)
  }
  return out
}

describe('pagedList', () => {
  it.each([
    ['no failure', {}, [1, 2, 3]],
    ['a reset connection on page 2', { 2: [reset()] }, [1, 2, 2, 3]],
    ['a 503 and a reset on page 1', { 1: [http(503), reset()] }, [1, 1, 1, 2, 3]],
    ['four failures of page 3', { 3: [reset(), reset(), http(502), reset()] }, [1, 2, 3, 3, 3, 3, 3]],
  ])('%s: every item once, in order', async (_name, failures, reads) => {
    const p = pages(failures)
    expect(await all(p.fetchPage)).toEqual(['1a', '1b', '2a', '2b', '3a', '3b'])
    expect(p.reads).toEqual(reads)
  })

  it.each([
    ['five failures in a row', { 2: [reset(), reset(), reset(), reset(), reset()] }, [1, 2, 2, 2, 2, 2], 'connection reset'],
    ['a 404 (an answer about this read)', { 2: [http(404)] }, [1, 2], 'HTTP_404'],
    ['a 429 (the budget waits those out; past it, the caller decides)', { 1: [http(429)] }, [1], 'HTTP_429'],
  ])('%s: thrown, the page read no more', async (_name, failures, reads, message) => {
    const p = pages(failures)
    await expect(all(p.fetchPage)).rejects.toThrow(message)
    expect(p.reads).toEqual(reads)
  })
})

describe('messageList (the cursor-paged message list) reads its pages the same way', () => {
  /** Two pages of messages by cursor; `failures` are thrown, one per read, before the first page answers. */
  function cursorPages(failures: PlatformError[]) {
    const reads: (string | undefined)[] = []
    const message = (id: string) => ({ id, conversationId: 'group_g1', sender: 'u1', sentAt: 1 }) as unknown as ChatMessage
    const client = {
      listMessages: async (query: { id?: string }) => {
        reads.push(query.id)
        const failure = failures.shift()
        if (failure) {
          throw failure
        }
        return query.id === undefined ? { data: [message('1')], meta: { next: { id: '1' } } } : { data: [], meta: {} }
      },
    } as unknown as PlatformClient
    return { reads, client }
  }

  it.each([
    ['a reset connection, then the page', [reset()], [undefined, undefined, '1']],
    ['a 502 and a reset', [http(502), reset()], [undefined, undefined, undefined, '1']],
  ])('%s: every message once', async (_name, failures, reads) => {
    const p = cursorPages(failures)
    const ids: string[] = []
    for await (const m of messageList(passThrough, p.client, {}, undefined, 1)) {
      ids.push(m.id)
    }
    expect(ids).toEqual(['1'])
    expect(p.reads).toEqual(reads)
  })

  it('a 404 is thrown at once', async () => {
    const p = cursorPages([http(404)])
    await expect(messageList(passThrough, p.client, {}, undefined, 1).next()).rejects.toThrow('HTTP_404')
    expect(p.reads).toEqual([undefined])
  })
})
