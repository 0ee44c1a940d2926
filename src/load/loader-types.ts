/**
 * The types the loader's parts share: how a loader is run ({@link LoaderOptions}) and what it
 * counted and how it ended ({@link LoaderCounters}, {@link LoadOutcome}), a batch held under a lease
 * ({@link Claim}), and one run's state as the parts see it ({@link LoaderRun}: the class in
 * loader-run.ts). Here so that the parts (dispatch-loop.ts, claim.ts, send-batch.ts,
 * process-batch.ts, result-settler.ts, pause-on-rate-limit.ts, read-back.ts, pack-batches.ts,
 * take-over-dead-leases.ts) and loader-run.ts, which starts some of them, need not import each other.
 */
import type PQueue from 'p-queue'
import type { Logger } from 'pino'

import type { BatchItem } from '../state/batch-ledger.ts'
import type { EntityStats, LedgerStore } from '../state/store.ts'
import type { ImportResult, PlatformClient } from '../target/client.ts'
import type { Entity } from '../target/schemas.ts'
import type { LoadConfig } from './config.ts'
import type { LedgerRetry } from './ledger-retry.ts'
import type { OutageWatch } from './outage.ts'
import type { ChatBudget, QuotaBudget } from './quota-budget.ts'
import type { RetentionPolicy } from './retention-at-pack.ts'

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
  /**
   * Ledger operations of the loader that failed: settling a batch (retried once its lease ends), or
   * each failed attempt of the loop's — claiming, packing, the drained check, the dead-lease
   * takeover (retried with backoff for up to `load.giveUpAfterMs`: ledger-retry.ts).
   */
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

/** A batch this process holds under a lease, and what its requests did so far. */
export interface Claim {
  batchId: number
  /** The lease token: every write about this batch presents it (fencing). */
  token: string
  entity: Entity
  items: BatchItem[]
  claimedAt: number
  /** The local clock when the lease was last claimed or renewed (it runs `load.leaseSeconds` from about then). */
  renewedAt: number
  /** A renewal found the lease gone (expired or taken over): nothing about this claim will be recorded. */
  leaseLost: boolean
  requests: number
  rateLimited: number
  firstSentAt: number | undefined
  lastStatus: number | undefined
  lastLatencyMs: number | undefined
  lastRetryAfterMs: number | undefined
  /** When this claim's first request failed. */
  firstFailureAt: number | undefined
  /** When the batch this one was split from was split (local clock), for split halves. */
  parentSplitAt: number | undefined
  /** The error code of the batch this one was split from (isolate-rows.ts `ISOLATION_CODE`: a suspect sent alone). */
  parentCode: string | undefined
}

/** One run of the loader, as its parts share it (loader-run.ts has the whole of it). */
export interface LoaderRun {
  readonly store: LedgerStore
  readonly jobId: string
  readonly settings: LoadConfig
  readonly log: Logger
  readonly host: string
  readonly workerId: string
  /** Batches packed ahead. */
  readonly depth: number
  readonly counters: LoaderCounters
  readonly options: LoaderOptions
  /** Aborted by the caller's signal or by {@link halt}: no new request starts. */
  readonly stop: AbortController
  /** Why the run stops, when it stops for an error. */
  fatal: Error | undefined
  /** The senders: `settings.concurrency` batches in flight. */
  readonly lanes: PQueue
  readonly watch: OutageWatch
  /** The loop's ledger operations, retried through a transient failure of the ledger (ledger-retry.ts). */
  readonly ledgerRetry: LedgerRetry
  /** Settles a claim's items from the answer (result-settler.ts); resolves once its group is committed (or fenced out). */
  readonly settler: { settle(c: Claim, result: ImportResult): Promise<void> }
  /** The app's chat budget, shared by every process (`target.chatQuota`): the read-backs after a bad-row 500 draw from it. */
  readonly chatReads: ChatBudget
  /** `policies.legacyMetadata.key`: how read-backs match listed messages with rows. */
  readonly legacyMetadataKey: string
  /** The budget a request to `entity`'s endpoint takes its slot from (and a 429 there pauses). */
  budgetFor(entity: Entity): QuotaBudget
  /** Stops the run for `err`: no new request starts; the ones in flight finish and are settled. */
  halt(err: Error): void
  /** How much of the claim's lease is left, by the local clock (0 once a renewal found it lost). */
  leaseLeftMs(c: Claim): number
  /** The claim is held from its claim until it is settled, split or handed back: its lease is renewed meanwhile. */
  hold(c: Claim): void
  letGo(c: Claim): void
  /** Renews the leases of `claims` (default: every claim held), fenced by the lease token; a lost one is marked. */
  renewLeases(claims?: readonly Claim[]): Promise<void>
  /** Makes sure the claim's lease outlasts `needMs` from now, renewing it when it does not; false when it cannot. */
  ensureLease(c: Claim, needMs: number): Promise<boolean>
  /** A fenced write found the lease taken over: count it and say so. */
  fencedOut(batchId: number): void
}
