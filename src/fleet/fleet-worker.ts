/**
 * `chatferry fleet worker`: one process serving the load of every tenant of a fleet until
 * stopped, on any number of machines sharing the ledger. A tenant gets its own loader here
 * (src/job/run-job-loader.ts, worker mode: both lanes) when it has work — an item planned or in
 * flight, a batch open, an update planned or in flight (tenant-work-watch.ts: one ledger query for
 * every tenant each {@link WORK_POLL_MS}) — and the loader ends after {@link IDLE_STOP_AFTER_MS}
 * without any. A loader polls for batches, heartbeats and reads its quota row whether its tenant has
 * work or not: an idle worker of 50 tenants with a loader each spent 1.6 s of CPU in 30 s and
 * made the ledger commit ~300 transactions a second, against 0.17 s and ~20 this way (`npm run
 * bench -- idle-fleet-worker`) — while `fleet run` plans the tenants, or long after they are done.
 *
 * Each loader draws on its own app's quota row, with `load.concurrency` batches in flight at most:
 * every tenant with work has lanes in every worker, so a tenant with 10M messages never takes the
 * slots of one with 10k (their quotas are apart, and so are their lanes). The loaders share the
 * process's ledger pool. A loader ended for lack of work leaves nothing behind: its
 * tenant had no batch open and no update in flight, and a batch planned meanwhile is served when
 * the next look finds it (by this worker, or by any other process at once).
 *
 * A tenant's loader that stops on its own (its platform refused the key, an outage past
 * `load.giveUpAfterMs`) is logged and started again after {@link RESTART_AFTER_MS} (when its tenant
 * still has work); the others go on.
 *
 * Before it serves, the worker proves the fleet key ({@link servedTenants}): a tenant whose stored
 * key does not open (or that is not provisioned) is not served, and is named with its reason in the
 * worker's health line (`fleet worker serving`, fields `served` and `notServed`); a worker that can
 * serve no tenant at all — a wrong fleet key opens no tenant's key — exits 2 at once instead of
 * running for ever and looking healthy.
 */
import type { Logger } from 'pino'

import { ConfigError } from '../errors.ts'
import { runLanes } from '../job/job-run.ts'
import { sleep } from '../load/sleep.ts'
import type { LedgerStore } from '../state/store.ts'
import { type FleetTenantJob, tenantContext, type TenantTicks, tenantTicks } from './fleet-run.ts'
import { reasonOf } from './fleet-run-outcome.ts'
import type { UnusableTenant } from './fleet-run-tenants.ts'
import { FLEET_KEY_ENV } from './key-vault.ts'
import { type TenantWorkWatch, watchTenantWork } from './tenant-work-watch.ts'

/** How long a tenant's loader that stopped on its own rests before it starts again. */
export const RESTART_AFTER_MS = 30_000

/**
 * How often the worker asks the ledger which tenants have work: a tenant planned by `fleet run`
 * (which loads it at once itself) gets this worker's lanes too within this time.
 */
export const WORK_POLL_MS = 2000

/**
 * How long a tenant's loader stays without work before it ends: long enough that a delta's
 * trickle of updates does not start and end a loader (and write a run row) every few seconds.
 */
export const IDLE_STOP_AFTER_MS = 60_000

export interface FleetWorkerOptions {
  readonly store: LedgerStore
  readonly tenants: readonly FleetTenantJob[]
  readonly logger: Logger
  /** Each tenant's lanes' counters, about once a second while they run (the fleet's metrics). */
  readonly ticks?: TenantTicks
  readonly signal: AbortSignal
  /** @default RESTART_AFTER_MS */
  readonly restartAfterMs?: number
  /** @default WORK_POLL_MS */
  readonly workPollMs?: number
  /** @default IDLE_STOP_AFTER_MS */
  readonly idleStopAfterMs?: number
}

/** The worker's health line: which tenants it serves, and why each other one is not served. */
export interface FleetWorkerHealth {
  readonly served: string[]
  readonly notServed: Record<string, string>
}

/**
 * The worker's health, or a {@link ConfigError} (exit 2) when it can serve no tenant: every reason
 * listed, the fleet key named first when it is the one that opens no tenant's stored key.
 */
export function servedTenants(file: string, jobs: readonly FleetTenantJob[], unusable: readonly UnusableTenant[]): FleetWorkerHealth {
  const notServed = Object.fromEntries(unusable.map((u) => [u.tenantId, u.reason]))
  if (jobs.length > 0) {
    return { served: jobs.map((j) => j.tenantId), notServed }
  }
  const keyRefused = unusable.filter((u) => u.keyRefused)
  throw new ConfigError(file, [
    ...(keyRefused.length > 0
      ? [
          {
            path: FLEET_KEY_ENV,
            message: `opens no tenant's stored key (${keyRefused.map((u) => u.tenantId).join(', ')}): set the fleet's key; nothing was served`,
          },
        ]
      : []),
    ...unusable.filter((u) => !u.keyRefused).map((u) => ({ path: `tenants.${u.tenantId}`, message: `is not served: ${u.reason}` })),
    ...(unusable.length === 0 ? [{ path: 'tenants', message: 'no tenant to serve' }] : []),
  ])
}

/** Serves every tenant with work until the signal; resolves when every loader has stopped. */
export async function serveFleet(options: FleetWorkerOptions): Promise<void> {
  const watch = watchTenantWork({
    lookup: (jobIds) => options.store.statusLookups.jobsWithWork(jobIds),
    jobIds: options.tenants.map((t) => t.jobId),
    intervalMs: options.workPollMs ?? WORK_POLL_MS,
    logger: options.logger,
    signal: options.signal,
  })
  await Promise.all(options.tenants.map((t) => serveTenant(t, watch, options)))
}

async function serveTenant(t: FleetTenantJob, watch: TenantWorkWatch, options: FleetWorkerOptions): Promise<void> {
  const { signal } = options
  const log = options.logger.child({ tenant: t.tenantId, jobId: t.jobId })
  const ctx = tenantContext(t, options.store)
  while (!signal.aborted) {
    await watch.untilWork(t.jobId, signal)
    if (signal.aborted) {
      return
    }
    const idle = new AbortController()
    const loaderSignal = AbortSignal.any([signal, idle.signal])
    void watch.untilIdle(t.jobId, options.idleStopAfterMs ?? IDLE_STOP_AFTER_MS, loaderSignal).then(() => idle.abort())
    try {
      log.debug('tenant has work: starting its loader')
      const { loaded: outcome } = await runLanes(ctx, 'worker', {
        role: 'fleet-worker',
        logger: log,
        signal: loaderSignal,
        ...(options.ticks ? { ticks: tenantTicks(options.ticks, t) } : {}),
      })
      if (signal.aborted) {
        return
      }
      if (idle.signal.aborted && outcome.status === 'stopped') {
        log.debug('tenant has no work left: its loader ended')
        continue
      }
      log.warn(
        { status: outcome.status, reason: outcome.error ? reasonOf(outcome.error) : undefined },
        "tenant's loader stopped; starting it again later",
      )
    } catch (err) {
      if (signal.aborted) {
        return
      }
      if (idle.signal.aborted) {
        continue
      }
      log.error({ err: reasonOf(err) }, "tenant's loader failed; starting it again later")
    } finally {
      idle.abort()
    }
    await sleep(options.restartAfterMs ?? RESTART_AFTER_MS, signal)
  }
}
