/**
 * One run of the loader as an object (the parts see it as loader-types.ts's `LoaderRun`): its options, counters, stop signal, quota
 * budget, outage watch and result settler, which the parts (dispatch-loop.ts, send-batch.ts,
 * process-batch.ts, result-settler.ts, take-over-dead-leases.ts) share. `start` sets everything
 * up and registers the process; `shutdown` and `finish` take it down and say how it ended. The run
 * row is not the loader's: the job's run (src/job/job-run.ts) writes it, from the counters.
 */
import { randomUUID } from 'node:crypto'

import PQueue from 'p-queue'
import type { Logger } from 'pino'

import type { LedgerStore } from '../state/store.ts'
import { DEFAULT_CHAT_REQUESTS_PER_MINUTE } from '../target/config.ts'
import type { Entity } from '../target/schemas.ts'
import { type ChatBudget, createChatBudget } from './chat-budget.ts'
import { type LoadConfig, quotaTiming } from './config.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import { hostKey } from './host-key.ts'
import { createLedgerRetry, type LedgerRetry } from './ledger-retry.ts'
import type { Claim, LoaderCounters, LoaderOptions, LoaderRun as SharedLoaderRun, LoadOutcome, LoadOutcomeStatus } from './loader-types.ts'
import { createOutageWatch, type OutageWatch } from './outage.ts'
import { openQuotaBudgets, type QuotaBudget, type QuotaBudgets, requestsPerWindow } from './quota-budget.ts'
import { ResultSettler } from './result-settler.ts'

export class LoaderRun implements SharedLoaderRun {
  readonly store: LedgerStore
  readonly jobId: string
  readonly settings: LoadConfig
  readonly log: Logger
  readonly host = hostKey()
  readonly workerId: string
  /** Batches packed ahead. */
  readonly depth: number
  readonly counters: LoaderCounters

  readonly options: LoaderOptions
  /** The quota budgets this run draws from: one for the app, or one per endpoint (`load.quotaScope`). */
  private readonly budgets: QuotaBudgets
  /** Aborted by the caller's signal or by {@link halt}: no new request starts. */
  readonly stop = new AbortController()
  /** Why the run stops, when it stops for an error. */
  fatal: Error | undefined
  /** The senders: `settings.concurrency` batches in flight. */
  readonly lanes: PQueue
  readonly watch: OutageWatch
  readonly ledgerRetry: LedgerRetry
  readonly settler: ResultSettler = new ResultSettler(this)
  /** The app's chat budget, shared by every process (`target.chatQuota`): the read-backs after a bad-row 500 draw from it. */
  readonly chatReads: ChatBudget
  /** `policies.legacyMetadata.key`: how read-backs match listed messages with rows. */
  readonly legacyMetadataKey: string
  private readonly onAbort = () => this.stop.abort(this.options.signal?.reason)
  private timers: NodeJS.Timeout[] = []
  /** The claims this process holds (claimed, not yet settled or handed back): their leases are renewed. */
  private readonly held = new Set<Claim>()
  private renewing: Promise<void> | undefined

  private constructor(options: LoaderOptions, budgets: QuotaBudgets, chatBudget: ChatBudget, startedAt: number) {
    this.counters = {
      requests: 0,
      rateLimited: 0,
      itemsDone: 0,
      itemsRejected: 0,
      itemsRequeued: 0,
      itemsAgedOut: 0,
      textLinksRewritten: 0,
      textLinksOverLimit: 0,
      batchesSettled: 0,
      batchesSplit: 0,
      batchesReleased: 0,
      readBacks: 0,
      chatRequests: 0,
      fenced: 0,
      pauses: 0,
      pausedMs: 0,
      ledgerErrors: 0,
      startedAt,
      firstRequestAt: undefined,
    }
    this.options = options
    this.budgets = budgets
    this.chatReads = chatBudget
    this.store = options.store
    this.jobId = options.jobId
    this.settings = options.settings
    this.log = options.logger.child({ jobId: options.jobId, component: 'loader' })
    this.workerId = `${this.host}/${process.pid}/${randomUUID().slice(0, 8)}`
    this.legacyMetadataKey = options.legacyMetadataKey ?? 'legacy'
    this.depth = this.settings.queueDepth ?? Math.max(32, this.settings.concurrency * 8)
    this.lanes = new PQueue({ concurrency: this.settings.concurrency })
    this.watch = createOutageWatch({ giveUpAfterMs: this.settings.giveUpAfterMs, logger: this.log })
    this.ledgerRetry = createLedgerRetry({
      giveUpAfterMs: this.settings.giveUpAfterMs,
      logger: this.log,
      signal: this.stop.signal,
      counters: this.counters,
    })
  }

  /** Checks the settings, opens the quota budget, registers the process. */
  static async start(options: LoaderOptions): Promise<LoaderRun> {
    const startedAt = Date.now()
    const { store, jobId, settings } = options
    if (settings.leaseSeconds * 1000 < options.timeoutMs + 3000) {
      throw new FatalLoadError(
        `load.leaseSeconds (${settings.leaseSeconds}) must exceed the request timeout (${options.timeoutMs} ms) by at least 3 s`,
      )
    }
    await store.ensureJob(jobId, options.appId)
    const budgets = await openQuotaBudgets(store.quota, {
      appId: options.appId,
      scope: settings.quotaScope,
      requestsPerWindow: requestsPerWindow(options.requestsPerMinute, settings.quotaWindowMs),
      ...quotaTiming(settings),
    })
    const chatBudget = await createChatBudget(store.quota, {
      appId: options.appId,
      requestsPerMinute: options.chatRequestsPerMinute ?? DEFAULT_CHAT_REQUESTS_PER_MINUTE,
      ...quotaTiming(settings),
      maxRetryAfterMs: settings.maxRetryAfterMs,
      maxRateLimitedRetries: 4,
    })
    return new LoaderRun(options, budgets, chatBudget, startedAt).register()
  }

  private async register(): Promise<this> {
    const { options, settings } = this
    options.signal?.addEventListener('abort', this.onAbort, { once: true })
    if (options.signal?.aborted) {
      this.stop.abort(options.signal.reason)
    }
    await this.store.workers.register({ id: this.workerId, jobId: this.jobId, hostKey: this.host, pid: process.pid, role: options.mode })
    this.log.info(
      {
        ...(options.runId !== undefined ? { runId: options.runId } : {}),
        workerId: this.workerId,
        concurrency: settings.concurrency,
        leaseSeconds: settings.leaseSeconds,
        slotMs: this.budgetFor('messages').intervalMs,
        quotaScope: settings.quotaScope,
      },
      'loader started',
    )
    this.timers.push(
      setInterval(() => {
        void this.store.workers.heartbeat(this.workerId).catch(() => {})
      }, 5000),
    )
    // Lease renewal: three times per lease, every held batch's lease (src/state/lease-units.ts).
    this.timers.push(
      setInterval(
        () => {
          void this.renewLeases().catch((err: unknown) => this.log.warn({ err }, 'renewing the leases failed'))
        },
        Math.max(1000, Math.floor((settings.leaseSeconds * 1000) / 3)),
      ),
    )
    if (options.onTick) {
      this.timers.push(setInterval(() => options.onTick?.(this.counters), 1000))
    }
    return this
  }

  /** The budget a request to `entity`'s endpoint takes its slot from (and a 429 there pauses). */
  budgetFor(entity: Entity): QuotaBudget {
    return this.budgets[entity]
  }

  /** Stops the run for `err`: no new request starts; the ones in flight finish and are settled. */
  halt(err: Error): void {
    this.fatal ??= err
    this.stop.abort(this.fatal)
  }

  /** How much of the claim's lease is left, by the local clock (0 once a renewal found it lost). */
  leaseLeftMs(c: Claim): number {
    return c.leaseLost ? 0 : this.settings.leaseSeconds * 1000 - (Date.now() - c.renewedAt)
  }

  /** The claim is held from its claim until it is settled, split or handed back: its lease is renewed meanwhile. */
  hold(c: Claim): void {
    this.held.add(c)
  }

  letGo(c: Claim): void {
    this.held.delete(c)
  }

  /**
   * Renews the leases of `claims` (default: every claim held), in one statement, fenced by the
   * lease token. A claim whose lease was no
   * longer valid is marked lost. One renewal at a time: a caller arriving during one waits for it
   * and then renews its own claims.
   */
  async renewLeases(claims: readonly Claim[] = [...this.held]): Promise<void> {
    while (this.renewing !== undefined) {
      await this.renewing.catch(() => {})
    }
    const live = claims.filter((c) => !c.leaseLost)
    if (live.length === 0) {
      return
    }
    const startedAt = Date.now()
    const renewal = this.store.batches
      .renew(
        live.map((c) => ({ batchId: c.batchId, token: c.token })),
        this.settings.leaseSeconds,
      )
      .then((renewed) => {
        for (const c of live) {
          if (renewed.has(c.batchId)) {
            c.renewedAt = startedAt
          } else {
            c.leaseLost = true
          }
        }
      })
    this.renewing = renewal
    try {
      await renewal
    } finally {
      this.renewing = undefined
    }
  }

  /**
   * Makes sure the claim's lease outlasts `needMs` from now, renewing it when it does not; false
   * when it cannot (the lease was lost).
   */
  async ensureLease(c: Claim, needMs: number): Promise<boolean> {
    if (this.leaseLeftMs(c) >= needMs) {
      return true
    }
    await this.renewLeases([c]).catch((err: unknown) => this.log.warn({ err, batch: c.batchId }, 'renewing the lease failed'))
    return this.leaseLeftMs(c) >= needMs
  }

  /** A fenced write found the lease taken over: count it and say so. */
  fencedOut(batchId: number): void {
    this.counters.fenced++
    this.log.warn({ batch: batchId }, 'lease lost: another worker owns this batch now; its results are not recorded here')
  }

  /** Stops the timers and waits for the batches in flight. */
  async shutdown(): Promise<void> {
    for (const t of this.timers) {
      clearInterval(t)
    }
    this.options.signal?.removeEventListener('abort', this.onAbort)
    await this.lanes.onIdle().catch(() => {})
  }

  /** Unregisters the process; returns how the run ended. */
  async finish(ended: LoadOutcomeStatus): Promise<LoadOutcome> {
    const { counters, fatal } = this
    const stats = await this.store.entityStats(this.jobId)
    let status = ended
    if (fatal !== undefined) {
      status = 'failed'
    } else if (status === 'done' && stats.some((s) => s.rejected > 0)) {
      status = 'rejected'
    }
    await this.store.workers.remove(this.workerId).catch(() => {})
    this.options.onTick?.(counters)
    this.log.info({ status, ...counters }, 'loader finished')
    return { status, counters, stats, ...(fatal !== undefined ? { error: fatal } : {}) }
  }
}
