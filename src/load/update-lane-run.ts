/**
 * One run of the update lane as an object: its options, counters, stop signal, outage watch and
 * the chat calls' pacing (`chatCall`: a slot of the chat budget per call, a 429 pauses the budget
 * for every process). The loop is update-lane.ts, one update's path settle-update.ts.
 */
import { randomUUID } from 'node:crypto'

import type { Logger } from 'pino'

import type { ConflictPolicy } from '../state/schema.ts'
import type { LedgerStore } from '../state/store.ts'
import type { PlatformClient } from '../target/client.ts'
import type { ChatBudget } from './chat-budget.ts'
import type { LoadConfig } from './config.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { hostKey } from './host-key.ts'
import { createLedgerRetry, type LedgerRetry } from './ledger-retry.ts'
import { createOutageWatch, type OutageWatch } from './outage.ts'

export interface UpdateLaneOptions {
  readonly store: LedgerStore
  readonly jobId: string
  readonly client: PlatformClient
  /** The chat interface's shared budget (`target.chatQuota`, src/load/chat-budget.ts). */
  readonly budget: ChatBudget
  readonly settings: LoadConfig
  /** The client's request timeout: an update's lease outlasts one call by more. */
  readonly timeoutMs: number
  /** `policies.legacyMetadata.key`: where chatferry wrote a message's legacy id (the message lookup reads it). */
  readonly legacyMetadataKey: string
  /** `changes.conflicts`: what to do with an update whose item changed on the platform (checked just before it is sent). */
  readonly conflicts: ConflictPolicy
  readonly logger: Logger
  /** `load` returns when no update is left; `worker` keeps serving until aborted. */
  readonly mode: 'load' | 'worker'
  readonly signal?: AbortSignal
  /** Called about once a second with the lane's counters. */
  readonly onTick?: (counters: UpdateLaneCounters) => void
}

/** Per update kind: how many this process settled. */
export type KindCounts = Record<string, number>

/** What this process's update lane did. */
export interface UpdateLaneCounters {
  /** Chat calls sent (writes, checks and lookups). */
  requests: number
  rateLimited: number
  /** Updates settled done, per kind (with or without a call). */
  done: KindCounts
  /** Updates rejected, per kind. */
  rejected: KindCounts
  /** Updates the platform cannot take that were settled as reported instead (see settle-update.ts), per kind. */
  reported: KindCounts
  /** Updates held back because their item changed on the platform (`conflict` or `dropped`), per kind. */
  heldBack: KindCounts
  /** Updates found already applied by the check: settled done without a call. */
  confirmed: number
  /** Updates handed back for a later try (an outage, a stop). */
  handedBack: number
  /** Settlements refused because the lease was lost (another process owns the update). */
  fenced: number
  /**
   * Ledger operations of the lane that failed: an update's (retried once its lease ends), or each
   * failed attempt of the loop's (retried with backoff for up to `load.giveUpAfterMs`: ledger-retry.ts).
   */
  ledgerErrors: number
}

export const emptyUpdateCounters = (): UpdateLaneCounters => ({
  requests: 0,
  rateLimited: 0,
  done: {},
  rejected: {},
  reported: {},
  heldBack: {},
  confirmed: 0,
  handedBack: 0,
  fenced: 0,
  ledgerErrors: 0,
})

export class UpdateLaneRun {
  readonly options: UpdateLaneOptions
  readonly log: Logger
  readonly host = hostKey()
  readonly owner: string
  readonly counters = emptyUpdateCounters()
  readonly stop = new AbortController()
  readonly watch: OutageWatch
  /** The loop's ledger operations, retried through a transient failure of the ledger (ledger-retry.ts). */
  readonly ledgerRetry: LedgerRetry
  fatal: Error | undefined
  private readonly onAbort = () => this.stop.abort(this.options.signal?.reason)

  constructor(options: UpdateLaneOptions) {
    this.options = options
    this.log = options.logger.child({ jobId: options.jobId, component: 'update-lane' })
    this.owner = `${this.host}/${process.pid}/${randomUUID().slice(0, 8)}`
    this.watch = createOutageWatch({ giveUpAfterMs: options.settings.giveUpAfterMs, logger: this.log })
    this.ledgerRetry = createLedgerRetry({
      giveUpAfterMs: options.settings.giveUpAfterMs,
      logger: this.log,
      signal: this.stop.signal,
      counters: this.counters,
    })
    options.signal?.addEventListener('abort', this.onAbort, { once: true })
    if (options.signal?.aborted) {
      this.stop.abort(options.signal.reason)
    }
  }

  get ledger() {
    return this.options.store.updateLane
  }

  /** Stops the lane for `err`: no new call starts; the ones in flight finish and are settled. */
  halt(err: Error): void {
    this.fatal ??= err
    this.stop.abort(this.fatal)
  }

  count(which: 'done' | 'rejected' | 'reported' | 'heldBack', kind: string): void {
    this.counters[which][kind] = (this.counters[which][kind] ?? 0) + 1
  }

  /**
   * One chat call at a slot of the chat budget; a 429 pauses the budget (every process) for the
   * platform's wait and the same call goes again at its next slot. `beforeSend` runs between the
   * slot and the request (the lane records the update `sent` there); when it says no, nothing is
   * sent and `undefined` comes back. Other failures throw the client's PlatformError.
   */
  async chatCall<T>(call: () => Promise<T>, beforeSend?: () => Promise<boolean>): Promise<{ value: T } | undefined> {
    const answer = await this.options.budget.runAtSlot(call, {
      signal: this.stop.signal,
      maxRateLimitedRetries: Number.POSITIVE_INFINITY,
      atSlot: async () => {
        if (this.watch.exceeded()) {
          this.halt(new FatalLoadError(this.watch.giveUpMessage()))
        }
        this.stop.signal.throwIfAborted()
        if (beforeSend !== undefined && !(await beforeSend())) {
          return false
        }
        // The call is never cut short by a stop: its answer is settled (the platform may have committed it).
        this.counters.requests++
        return true
      },
      onRateLimited: (ms) => {
        this.counters.rateLimited++
        this.log.warn({ retryAfterMs: ms }, '429 from the chat interface: the chat budget pauses (every process)')
      },
    })
    if (answer !== undefined) {
      this.watch.success()
    }
    return answer
  }

  /** Unhooks the caller's signal. */
  dispose(): void {
    this.options.signal?.removeEventListener('abort', this.onAbort)
  }

  /** Leases are for this long: the settings' lease, at least the request timeout + 3 s. */
  get leaseSeconds(): number {
    return Math.max(this.options.settings.leaseSeconds, Math.ceil((this.options.timeoutMs + 3000) / 1000))
  }
}
