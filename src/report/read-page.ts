/**
 * One page of a platform list, as `verify` and `plan --check-target` read them: drawn from the
 * app's shared chat budget (src/load/chat-budget.ts: the ledger row every process of the app paces
 * its chat calls by, waiting out a 429 for every one of them), and read again with backoff
 * (p-retry) when it failed without an answer about it (a reset connection, a timeout, a 5xx), each
 * attempt at a new slot of the budget: a read is safe to repeat, and one dropped connection must
 * not fail a whole verify. An answer about the read (a 4xx) is thrown at once.
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

export function readPage<T>(budget: ChatBudget, fetchPage: () => Promise<T>, signal?: AbortSignal, retryDelayMs = 500): Promise<T> {
  const read = () =>
    budget.run(fetchPage, signal).catch((err: unknown) => {
      throw isTransient(err) ? err : new AbortError(err instanceof Error ? err : String(err))
    })
  return pRetry(read, { retries: PAGE_RETRIES, minTimeout: retryDelayMs, factor: 2, randomize: true, ...(signal ? { signal } : {}) })
}
