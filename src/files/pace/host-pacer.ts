/**
 * Pacing per source host: each host gets its own pool (at most `concurrency` downloads at once)
 * and rate (at most `requestsPerSecond` downloads started in any second, a sliding window), from
 * `files.perHost` or, for a host named in `files.hosts`, from there. A file's host is its
 * locator's `host` (a URL's host, `local`, `gridfs`). Built on p-queue, one queue per host,
 * created when the host is first seen.
 *
 * One task is one attempt at one file (open + read to the spool): a retry's backoff waits outside
 * the pool, so a failing file never holds a slot while it sleeps.
 */
import PQueue from 'p-queue'

/** The pacing of one host (`files.perHost`, `files.hosts[host]`). */
export interface HostPacing {
  readonly concurrency: number
  readonly requestsPerSecond: number
}

export interface HostPacer {
  /** Runs `task` when `host`'s pool and rate allow; rejects with the signal's reason when aborted while waiting. */
  run<T>(host: string, task: () => Promise<T>, signal?: AbortSignal): Promise<T>
  /** Tasks running and waiting for `host` (for status and tests). */
  load(host: string): { running: number; waiting: number }
  /** Resolves when every queue is empty and idle. */
  idle(): Promise<void>
}

export interface HostPacerOptions {
  readonly perHost: HostPacing
  readonly hosts?: Readonly<Record<string, HostPacing>>
}

export function createHostPacer(options: HostPacerOptions): HostPacer {
  const queues = new Map<string, PQueue>()
  const queueOf = (host: string): PQueue => {
    let queue = queues.get(host)
    if (!queue) {
      queue = new PQueue(queueOptions(options.hosts?.[host] ?? options.perHost))
      queues.set(host, queue)
    }
    return queue
  }
  return {
    run: (host, task, signal) => queueOf(host).add(() => task(), signal ? { signal } : {}),
    load: (host) => {
      const queue = queues.get(host)
      return { running: queue?.pending ?? 0, waiting: queue?.size ?? 0 }
    },
    idle: async () => {
      await Promise.all([...queues.values()].map((q) => q.onIdle()))
    },
  }
}

/** A rate as p-queue's whole-number cap per interval: 10/s → 10 per 1000 ms; 0.5/s → 1 per 2000 ms; 2.5/s → 3 per 1200 ms. */
export function queueOptions(pacing: HostPacing): { concurrency: number; intervalCap: number; interval: number; strict: true } {
  const intervalCap = Math.max(1, Math.round(pacing.requestsPerSecond))
  return { concurrency: pacing.concurrency, intervalCap, interval: Math.round((1000 * intervalCap) / pacing.requestsPerSecond), strict: true }
}
