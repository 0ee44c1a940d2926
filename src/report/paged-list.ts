/**
 * Every item of a paged chat list (`page`/`perPage`), one request per page, each read through
 * readPage (src/report/read-page.ts: the shared chat budget, and again after a failure without an
 * answer): `verify` and `plan --check-target` read the platform's lists through it.
 */
import type { ChatBudget } from '../load/chat-budget.ts'
import { readPage } from './read-page.ts'

export async function* pagedList<T>(
  budget: ChatBudget,
  fetchPage: (page: number, perPage: number) => Promise<{ data: T[]; meta: { pagination: { total_pages: number; current_page: number } } }>,
  perPage = 1000,
  signal?: AbortSignal,
  retryDelayMs = 500,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const res = await readPage(budget, () => fetchPage(page, perPage), signal, retryDelayMs)
    yield* res.data
    if (res.data.length < perPage || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
      return
    }
  }
}
