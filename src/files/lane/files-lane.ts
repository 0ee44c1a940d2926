/**
 * The files lane (issue 27): beside the import lane, it claims the job's planned files under a
 * fenced lease (`store.files`), copies each (`FileCopier`: read, check, store), and settles it
 * `copied` with its proof, or records the failed attempt — planned again after a backoff while it
 * is retryable and attempts remain, `failed` with its cause and the failure policy otherwise. A
 * message is packed only once its files are settled (src/state/sql/held-by-files.ts). The job's
 * files are readied for the run (`files.prepare`: the failure policy applied to failed files)
 * before any lane starts (src/job/run-job-files.ts), not here: the import lane must never see
 * them as they were.
 *
 * A copy that throws is the store's fault (refused, unreachable), not the file's: the lane hands
 * its files back untried and stops with a clear error — the run ends, nothing is lost, and the
 * next run goes on. After a SIGKILL the dead process's leases are taken over at start
 * (`take-over-file-leases.ts`); a file half copied is copied again (the store keeps one object
 * per content hash). `load` ends when no file is planned; a `worker` keeps serving.
 *
 * One store request per file in the ordinary case: a file whose bytes the ledger already has
 * `copied` under the same key is not uploaded (dedupe from the ledger), and the store is asked
 * (`stat`) before an upload only when an earlier copy may have put the bytes unrecorded — the
 * file was claimed before (its fence), or the job has such a file unsettled (`inDoubt`, read at
 * start and at every take-over). Otherwise the bytes are put at once.
 */
import { hostname } from 'node:os'

import type { Logger } from 'pino'

import type { ClaimedFile, LedgerStore } from '../../state/index.ts'
import type { FilesConfig } from '../config.ts'
import { shownLocator } from '../read/shown-url.ts'
import { batchedCopiedUnderKey } from './copied-key-lookup.ts'
import type { CopyOutcome, FileCopier } from './file-copier.ts'
import { retryDelayMs } from './retry-delay.ts'
import { takeOverFileLeases } from './take-over-file-leases.ts'

export interface FilesLaneOptions {
  readonly store: Pick<LedgerStore, 'files'>
  readonly jobId: string
  readonly settings: FilesConfig
  readonly copy: FileCopier
  readonly mode: 'load' | 'worker'
  readonly logger: Logger
  readonly signal: AbortSignal
  /** Files copied at once by this process (each host's own limit applies inside the copier). @default 8 */
  readonly concurrency?: number
  /** @default 120 */
  readonly leaseSeconds?: number
  /**
   * Copier calls per file in one run. The copier already tries a download `files.attempts` times
   * with backoff; a file it gives up on as retryable (a Retry-After longer than it waits, a source
   * still failing) gets one more call here after its backoff, then is `failed` (a later run under
   * `wait` tries again). @default 2
   */
  readonly callsPerRun?: number
  /** Called about once a second with the lane's counters. */
  readonly onTick?: (counters: FilesLaneCounters) => void
}

/** What this process's lane did. */
export interface FilesLaneCounters {
  copied: number
  /** Of those copied, the ones the store already held (nothing uploaded). */
  alreadyStored: number
  bytes: number
  /** Attempts that failed and will be tried again. */
  retried: number
  failed: number
  inFlight: number
}

export interface FilesLaneOutcome {
  readonly status: 'done' | 'stopped' | 'failed'
  readonly counters: FilesLaneCounters
  /** Why the lane stopped (`failed`): the store's error. */
  readonly error?: string
}

/** The store failed: the lane stops, its files handed back. */
interface StoreOutage {
  readonly message: string
}

export async function runFilesLane(options: FilesLaneOptions): Promise<FilesLaneOutcome> {
  const { store, jobId, settings, logger } = options
  const owner = `${hostname()}/${process.pid}`
  const leaseSeconds = options.leaseSeconds ?? 120
  const concurrency = options.concurrency ?? 8
  const counters: FilesLaneCounters = { copied: 0, alreadyStored: 0, bytes: 0, retried: 0, failed: 0, inFlight: 0 }
  const stop = new AbortController()
  const signal = AbortSignal.any([options.signal, stop.signal])
  const inflight = new Map<number, { claim: ClaimedFile; done: Promise<void> }>()
  let outage: StoreOutage | undefined

  await takeOverFileLeases(store, jobId, hostname())
  let inDoubt = await store.files.inDoubt(jobId)
  const copiedUnderKey = batchedCopiedUnderKey((keys) => store.files.copiedUnderKeys(jobId, keys))
  const tick = options.onTick ? setInterval(() => options.onTick?.({ ...counters, inFlight: inflight.size }), 1000) : undefined
  const renew = setInterval(
    () => void renewLeases().catch((err: unknown) => logger.warn({ err }, 'renewing file leases failed')),
    (leaseSeconds * 1000) / 3,
  )

  async function renewLeases(): Promise<void> {
    const held = [...inflight.values()].map((f) => ({ id: f.claim.id, fence: f.claim.fence }))
    const kept = await store.files.renew(owner, held, leaseSeconds)
    for (const h of held) {
      if (!kept.has(h.id)) {
        logger.warn({ file: h.id }, 'lost the lease of a file being copied; its copy will not be recorded')
      }
    }
  }

  async function copyOne(claim: ClaimedFile): Promise<void> {
    let outcome: CopyOutcome
    try {
      outcome = await options.copy(
        {
          id: claim.id,
          locator: claim.locator,
          name: claim.name,
          ...(claim.expectedSize !== undefined ? { expectedSize: claim.expectedSize } : {}),
          ...(claim.expectedType !== undefined ? { expectedType: claim.expectedType } : {}),
          // Claimed before (a crash, a lost lease, a store outage): its bytes may be in the store unrecorded.
          mayBeStored: claim.fence > 1 || inDoubt,
          copiedUnderKey,
        },
        signal,
      )
    } catch (err) {
      await store.files.release(claim, owner)
      if (!signal.aborted) {
        outage ??= { message: err instanceof Error ? err.message : String(err) }
        stop.abort()
      }
      return
    }
    await settle(claim, outcome)
  }

  async function settle(claim: ClaimedFile, outcome: CopyOutcome): Promise<void> {
    if (outcome.ok) {
      if (await store.files.copied(claim, owner, outcome)) {
        counters.copied++
        counters.bytes += outcome.bytes
        counters.alreadyStored += outcome.uploaded ? 0 : 1
      }
      return
    }
    const state = await store.files.failed(claim, owner, {
      cause: outcome.cause,
      reason: outcome.reason,
      retryable: outcome.retryable,
      retryAfterMs: retryDelayMs(claim.attempts, outcome.retryAfterMs),
      maxAttempts: options.callsPerRun ?? 2,
      onFailure: settings.onFailure,
    })
    if (state === 'planned') {
      counters.retried++
    } else if (state === 'failed') {
      counters.failed++
      logger.warn(
        { file: claim.name, source: shownLocator(claim.locator), cause: outcome.cause, reason: outcome.reason, onFailure: settings.onFailure },
        `file not copied (${outcome.cause}): ${claim.name} from ${shownLocator(claim.locator)}`,
      )
    }
  }

  try {
    let lastTakeOver = Date.now()
    while (!signal.aborted) {
      const free = concurrency - inflight.size
      const claimed = free > 0 ? await store.files.claim({ jobId, owner, leaseSeconds, limit: free }) : []
      for (const claim of claimed) {
        const done = copyOne(claim)
          .catch((err: unknown) => logger.error({ err, file: claim.id }, 'settling a file failed'))
          .finally(() => inflight.delete(claim.id))
        inflight.set(claim.id, { claim, done })
      }
      if (claimed.length > 0 || inflight.size >= concurrency) {
        await Promise.race([...[...inflight.values()].map((f) => f.done), sleep(250, signal)])
        continue
      }
      if (inflight.size === 0 && options.mode === 'load' && (await store.files.counts(jobId)).planned === 0) {
        return { status: 'done', counters }
      }
      if (Date.now() - lastTakeOver > 5000) {
        lastTakeOver = Date.now()
        await takeOverFileLeases(store, jobId, hostname())
        inDoubt = await store.files.inDoubt(jobId)
      }
      await Promise.race([...[...inflight.values()].map((f) => f.done), sleep(inflight.size > 0 ? 250 : 500, signal)])
    }
    await Promise.all([...inflight.values()].map((f) => f.done))
    if (outage !== undefined) {
      return {
        status: 'failed',
        counters,
        error: `the file store failed, so the files lane stopped (nothing is lost; run again when the store is back): ${outage.message}`,
      }
    }
    return { status: 'stopped', counters }
  } finally {
    clearInterval(renew)
    if (tick !== undefined) {
      clearInterval(tick)
    }
    options.onTick?.({ ...counters, inFlight: 0 })
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve()
      return
    }
    const t = setTimeout(done, ms)
    function done() {
      clearTimeout(t)
      signal.removeEventListener('abort', done)
      resolve()
    }
    signal.addEventListener('abort', done, { once: true })
  })
}
