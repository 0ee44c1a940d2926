/**
 * Which of a fleet's tenants have load work, for `fleet worker` (fleet-worker.ts): one ledger
 * query for every tenant (`store.statusLookups.jobsWithWork`: an item planned or sent, a batch
 * open, an update planned or sent) every `intervalMs`, instead of a loader per tenant polling its
 * queue, heartbeating and reading its quota row whether the tenant has anything to send or not.
 * A look that fails is logged and changes nothing: the tenants keep what the last look found.
 */
import type { Logger } from 'pino'

import { sleep } from '../load/sleep.ts'

export interface TenantWorkWatch {
  /** Resolves once a look has found work for the job (at once when the last look did), or when `signal` aborts. */
  untilWork(jobId: string, signal: AbortSignal): Promise<void>
  /** Resolves once the looks have found no work for the job for `idleMs` in a row, or when `signal` aborts. */
  untilIdle(jobId: string, idleMs: number, signal: AbortSignal): Promise<void>
}

export interface TenantWorkWatchOptions {
  /** Of these jobs, those with work: one statement for all of them. */
  readonly lookup: (jobIds: readonly string[]) => Promise<string[]>
  readonly jobIds: readonly string[]
  readonly intervalMs: number
  readonly logger: Logger
  /** Ends the looks. */
  readonly signal: AbortSignal
}

/** Starts looking at once and then every `intervalMs` until the signal. */
export function watchTenantWork(options: TenantWorkWatchOptions): TenantWorkWatch {
  const withWork = new Set<string>()
  /** Since when each job without work has been found without it (epoch ms). */
  const idleSince = new Map<string, number>()
  const listeners = new Set<() => void>()

  async function look(): Promise<void> {
    try {
      const found = new Set(await options.lookup(options.jobIds))
      const now = Date.now()
      withWork.clear()
      for (const jobId of options.jobIds) {
        if (found.has(jobId)) {
          withWork.add(jobId)
          idleSince.delete(jobId)
        } else if (!idleSince.has(jobId)) {
          idleSince.set(jobId, now)
        }
      }
    } catch (err) {
      options.logger.warn({ err }, "looking for the tenants' work failed; trying again")
    }
    for (const listener of [...listeners]) {
      listener()
    }
  }

  void (async () => {
    while (!options.signal.aborted) {
      await look()
      await sleep(options.intervalMs, options.signal)
    }
  })()

  function waitFor(test: () => boolean, signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      if (signal.aborted || test()) {
        return resolve()
      }
      const done = () => {
        listeners.delete(check)
        signal.removeEventListener('abort', done)
        resolve()
      }
      const check = () => {
        if (test()) {
          done()
        }
      }
      listeners.add(check)
      signal.addEventListener('abort', done, { once: true })
    })
  }

  return {
    untilWork: (jobId, signal) => waitFor(() => withWork.has(jobId), signal),
    untilIdle: (jobId, idleMs, signal) =>
      waitFor(() => {
        const since = idleSince.get(jobId)
        return since !== undefined && Date.now() - since >= idleMs
      }, signal),
  }
}
