/**
 * The platform's messages as verify reads them: one request per page through readPage (the shared
 * chat budget, and again after a failure without an answer), and the conversation each belongs to.
 */
import type { ChatBudget } from '../load/chat-budget.ts'
import type { PlatformClient } from '../target/client.ts'
import type { ChatMessage } from '../target/schemas.ts'
import { readPage } from './read-page.ts'

/** Every message matching `query`, oldest first, one paced request per page. */
export async function* messageList(
  pacer: ChatBudget,
  client: PlatformClient,
  query: { conversationId?: string },
  signal?: AbortSignal,
  retryDelayMs = 500,
): AsyncGenerator<ChatMessage> {
  let cursor: { id?: string; sentAt?: number } = {}
  for (;;) {
    const res = await readPage(pacer, () => client.listMessages({ ...query, limit: 1000, affix: 'append', ...cursor }, signal), signal, retryDelayMs)
    yield* res.data
    const next = res.meta.next
    if (res.data.length === 0 || next === undefined || (next.id === undefined && next.sentAt === undefined)) {
      return
    }
    if (next.id === cursor.id && next.sentAt === cursor.sentAt) {
      throw new Error('the platform message list did not advance its cursor')
    }
    cursor = { ...(next.id !== undefined ? { id: next.id } : {}), ...(next.sentAt !== undefined ? { sentAt: next.sentAt } : {}) }
  }
}

/** `group_<guid>`, or the two uids joined by `_user_`, sorted (as the platform names conversations). */
export function conversationOf(sender: string, receiverType: string, receiver: string): string {
  if (receiverType === 'group') {
    return `group_${receiver}`
  }
  const [a, b] = [sender, receiver].sort()
  return `${a}_user_${b}`
}
