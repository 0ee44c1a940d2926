/**
 * Sendbird's token-paged lists (`GET /users`, `/group_channels`, `/open_channels`,
 * `/group_channels/{url}/members`): each answer holds its items and `next`, the token of the next
 * page (empty at the end). A position in a list is the token of the page an item came in (`''`
 * for the first) and the item's index on it: resuming asks that page again and skips to the item.
 */
import type { SendbirdClient } from './client.ts'

/** Items per page: the most the reference allows on these lists. */
export const LIST_LIMIT = 100

export interface ListItem {
  /** The token the item's page was asked with (`''`: the first page). */
  readonly token: string
  readonly index: number
  readonly value: unknown
}

export interface ListRequest {
  readonly client: SendbirdClient
  readonly path: string
  /** The answer's key holding the items (`users`, `channels`, `members`). */
  readonly key: string
  readonly query: Record<string, string | number | boolean | undefined>
  /** Start at this page token, after this index on it (-1: at its first item). */
  readonly token?: string
  readonly afterIndex?: number
  readonly signal?: AbortSignal | undefined
}

/** The items of a list in order, page by page, from a position. */
export async function* listItems(r: ListRequest): AsyncGenerator<ListItem[]> {
  let token = r.token ?? ''
  let skip = r.afterIndex ?? -1
  for (;;) {
    const answer = await r.client.get(r.path, { ...r.query, limit: LIST_LIMIT, token: token === '' ? undefined : token }, r.signal)
    const items = Array.isArray(answer[r.key]) ? (answer[r.key] as unknown[]) : []
    const page = token
    yield items.flatMap((value, index) => (index > skip ? [{ token: page, index, value }] : []))
    skip = -1
    const next = typeof answer.next === 'string' ? answer.next : ''
    if (next === '' || items.length === 0) {
      return
    }
    token = next
  }
}
