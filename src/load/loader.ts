/**
 * The loader: drains a job's ledger into the platform, at the app's quota, in dependency order
 * (users → groups → members → messages, messages oldest first), surviving any crash.
 *
 * - **Packing**: planned items of the current entity are packed into full batches (≤ itemsPerRequest);
 *   each batch is a ledger row, written in one transaction; its items become `sent` *before* any
 *   request goes out.
 * - **Sending**: a process claims open batches from the ledger several at a time (SKIP LOCKED,
 *   each with a lease of `load.leaseSeconds` and a fresh lease token: the one lease mechanism,
 *   src/state/lease-units.ts), takes one slot of the app's shared quota budget per request, sends,
 *   and settles every item from its result in one transaction, fenced by the token: a worker whose
 *   lease was taken over records nothing. Answers that arrive together are settled in one such transaction (each batch fenced).
 * - **Retention**: messages that aged out of the retention window since planning are settled by
 *   the retention policy when packed, never sent (retention-at-pack.ts).
 * - **Failures**: 429 pauses the app's budget (Retry-After / X-RateLimit-Reset, else the wait in
 *   the 429's text); 5xx,
 *   timeouts and dropped connections are retried with jittered backoff (p-retry); then
 *   `judgeFailure` (failure-rule.ts) decides (a message request answered with the platform's
 *   bad-row 500 is first read back through the chat interface, read-back.ts: rows found are done,
 *   rows missing rejected, and only when none landed does the retry-then-split path follow): a batch that keeps answering 500 is split in halves
 *   down to the single poison item, rejected only when the platform answered other requests
 *   meanwhile; anything transient hands the batch back. Any run of failures without a success is
 *   an outage (outage.ts): logged as it happens, and the run stops after `giveUpAfterMs`.
 * - **Ledger failures** of the loop (claiming, packing, the drained check, the takeover) are
 *   retried with the same backoff, counted, and end the run after `giveUpAfterMs` (ledger-retry.ts).
 * - **Stopping** (signal or fatal error): no new request starts and quota waits and backoffs are
 *   cut short, but a request in flight is awaited and its answer settled: the platform may have
 *   committed it.
 * - **Crash**: a SIGKILLed process's batches come back when their lease expires (at once
 *   when the dead process ran on this host); re-sending is safe because "already exists" = done.
 *
 * The parts, one file each: loader-types.ts (the types they share: the options, the counters,
 * a claim, the run's state), loader-run.ts (the run's state), dispatch-loop.ts, pack-batches.ts,
 * claim.ts, process-batch.ts, send-batch.ts, pause-on-rate-limit.ts, result-settler.ts,
 * settle-item-results.ts, take-over-dead-leases.ts. The SQL is in src/state (store.batches, …).
 */
import { dispatchLoop } from './dispatch-loop.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { LoaderRun } from './loader-run.ts'
import type { LoaderOptions, LoadOutcome, LoadOutcomeStatus } from './loader-types.ts'

export type { LoaderCounters, LoaderOptions, LoadOutcome, LoadOutcomeStatus } from './loader-types.ts'
export { LOAD_OUTCOMES } from './loader-types.ts'
export { ALREADY_PRESENT_CODES } from './settle-item-results.ts'

/** Runs the loader until the ledger is drained (`load`) or until aborted (`worker`). */
export async function runLoader(options: LoaderOptions): Promise<LoadOutcome> {
  const run = await LoaderRun.start(options)
  let status: LoadOutcomeStatus = 'stopped'
  try {
    status = await dispatchLoop(run)
  } catch (err) {
    // A ledger operation of the loop that kept failing (ledger-retry.ts), or a bug: the lanes stop too.
    run.halt(err as Error)
  } finally {
    await run.shutdown()
  }
  return run.finish(status)
}

/** @internal */
export { FatalLoadError }
