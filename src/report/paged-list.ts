/**
 * Every item of a paged chat list (`page`/`perPage`), one request per page, each drawn from the
 * app's shared chat budget (src/load/chat-budget.ts: the ledger row every process of the app paces
 * its chat calls by, waiting out a 429 for every one of them): `verify` and `plan --check-target`
 * read the platform's lists through it. A page that failed without an answer about it (a reset
 * connection, a timeout, a 5xx) is read again with backoff (p-retry), each attempt at a new slot
 * of the budget: a read is safe to repeat, and one dropped connection must not fail a whole verify.
 */
import pRetry, { AbortError } from 'p-retry'

import type { ChatBudget } from '../load/chat-budget.ts'
import { PlatformError } from '../target/errors.ts'

/** Reads of one page after the first that failed retryably; then the last failure is thrown. */
const PAGE_RETRIES = 4

/** A failure worth reading the page again for: no answer, or a retryable one other than a 429 (the budget waits those out). */
function isTransient(err: unknown): boolean {
  return err instanceof PlatformError && err.retryable && err.status !== 429
}

export async function* pagedList<T>(
  budget: ChatBudget,
  fetchPage: (page: number, perPage: number) => Promise<{ data: T[]; meta: { pagination: { total_pages: number; current_page: number } } }>,
  perPage = 1000,
  signal?: AbortSignal,
  retryDelayMs = 500,
): AsyncGenerator<T> {
  for (let page = 1; ; page++) {
    const read = () =>
      budget
        .run(() => fetchPage(page, perPage), signal)
        .catch((err: unknown) => {
          throw isTransient(err) ? err : new AbortError(err instanceof Error ? err : String(err))
        })
    const res = await pRetry(read, { retries: PAGE_RETRIES, minTimeout: retryDelayMs, factor: 2, randomize: true, ...(signal ? { signal } : {}) })
    yield* res.data
    if (res.data.length < perPage || res.meta.pagination.current_page >= res.meta.pagination.total_pages) {
      return
    }
  }
}
