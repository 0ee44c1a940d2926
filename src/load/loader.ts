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
 * - **Stopping** (signal or fatal error): no new request starts and quota waits and backoffs are
 *   cut short, but a request in flight is awaited and its answer settled: the platform may have
 *   committed it.
 * - **Crash**: a SIGKILLed process's batches come back when their lease expires (at once
 *   when the dead process ran on this host); re-sending is safe because "already exists" = done.
 *
 * The parts, one file each: loader-run.ts (the run's state), dispatch-loop.ts, pack-batches.ts,
 * claim.ts, process-batch.ts, send-batch.ts, pause-on-rate-limit.ts, result-settler.ts,
 * settle-item-results.ts, take-over-dead-leases.ts. The SQL is in src/state (store.batches, …).
 */
import type { Logger } from 'pino'

import type { EntityStats, LedgerStore } from '../state/store.ts'
import type { PlatformClient } from '../target/client.ts'
import type { LoadConfig } from './config.ts'
import { dispatchLoop } from './dispatch-loop.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { LoaderRun } from './loader-run.ts'
import type { RetentionPolicy } from './retention-at-pack.ts'

export { ALREADY_PRESENT_CODES } from './settle-item-results.ts'

export const LOAD_OUTCOMES = ['done', 'rejected', 'stopped', 'failed'] as const
export type LoadOutcomeStatus = (typeof LOAD_OUTCOMES)[number]

export interface LoaderOptions {
  readonly store: LedgerStore
  readonly jobId: string
  readonly appId: string
  readonly client: PlatformClient
  readonly itemsPerRequest: number
  readonly requestsPerMinute: number
  /** The platform client's request timeout (the lease must outlast one request). */
  readonly timeoutMs: number
  readonly settings: LoadConfig
  readonly logger: Logger
  /** `load` returns when the ledger is drained; `worker` keeps serving until aborted. */
  readonly mode: 'load' | 'worker'
  readonly signal?: AbortSignal
  /**
   * The job's retention policy (`policies.retention`), applied again when messages are packed
   * (retention-at-pack.ts). @default {retentionDays: 183, oldMessages: 'skip'} (the policy's defaults)
   */
  readonly retention?: RetentionPolicy
  /**
   * Where chatferry writes each message's legacy id in `data.metadata` (`policies.legacyMetadata.key`):
   * the read-back after a bad-row 500 matches listed messages by it (read-back.ts). @default 'legacy'
   */
  readonly legacyMetadataKey?: string
  /**
   * `target.chatQuota.requestsPerMinute`: the app's chat budget (all processes together), which the
   * read-backs draw from. @default 1000 (DEFAULT_CHAT_REQUESTS_PER_MINUTE)
   */
  readonly chatRequestsPerMinute?: number
  /** The loader's clock for retention, epoch ms. @default Date.now */
  readonly now?: () => number
  /** `files.rewriteTextLinks`: messages go with the links to copied files in their text rewritten. @default false */
  readonly rewriteTextLinks?: boolean
  /** The id of the run row the job's run writes (src/job/run-row.ts), for the log. */
  readonly runId?: number
  /** Called about once a second with the process's counters (for a progress line, the run row). */
  readonly onTick?: (counters: LoaderCounters) => void
}

/** What this process did. */
export interface LoaderCounters {
  requests: number
  rateLimited: number
  itemsDone: number
  itemsRejected: number
  itemsRequeued: number
  /** Messages skipped when packed: they aged out of the retention window since planning. */
  itemsAgedOut: number
  batchesSettled: number
  batchesSplit: number
  batchesReleased: number
  /** Links to copied files rewritten in the texts of claimed messages (`files.rewriteTextLinks`; a batch sent again counts again). */
  textLinksRewritten: number
  /** Messages whose rewritten text would have gone over the platform's limits: sent with their text unchanged. */
  textLinksOverLimit: number
  /** Message batches read back through the chat interface after a bad-row 500 (read-back.ts). */
  readBacks: number
  /** Chat requests those read-backs sent: not import requests, they do not draw from the import quota. */
  chatRequests: number
  fenced: number
  /** 429s this process answered by pausing the app's budget, and the milliseconds of those pauses. */
  pauses: number
  pausedMs: number
  /** Ledger operations of the loader that failed (claiming, packing, settling a batch): retried, counted. */
  ledgerErrors: number
  startedAt: number
  firstRequestAt: number | undefined
}

export interface LoadOutcome {
  readonly status: LoadOutcomeStatus
  readonly counters: LoaderCounters
  readonly stats: EntityStats[]
  readonly error?: Error
}

/** Runs the loader until the ledger is drained (`load`) or until aborted (`worker`). */
export async function runLoader(options: LoaderOptions): Promise<LoadOutcome> {
  const run = await LoaderRun.start(options)
  let status: LoadOutcomeStatus = 'stopped'
  try {
    status = await dispatchLoop(run)
  } catch (err) {
    run.fatal ??= err as Error
  } finally {
    await run.shutdown()
  }
  return run.finish(status)
}

/** @internal */
export { FatalLoadError }
