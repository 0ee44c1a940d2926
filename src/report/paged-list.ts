/**
 * Every item of a paged chat list (`page`/`perPage`), one request per page, each drawn from the
 * app's shared chat budget (src/load/chat-budget.ts: the ledger row every process of the app paces
 * its chat calls by, waiting out a 429 for every one of them): `verify` and `plan --check-target`
 * read the platform's lists through it.
 */
import type { ChatBudget } from '../load/chat-budget.ts'

export async function* pagedList<T>(
  budget: ChatBudget,
  fetchPage: (page: number, perPage: number) => Promise<{ data: T[]; meta: { pagination: { total_pages: number; current_page: number } } }>,
  perPage = 1000,
  signal?: AbortSignal,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const res = await budget.run(() => fetchPage(page, perPage), signal)
    yield* res.data
    if (res.data.length < perPage || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
      return
    }
  }
}
