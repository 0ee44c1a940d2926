/**
 * `chatferry fleet worker`: one process serving the load queues of every tenant of a fleet until
 * stopped, on any number of machines sharing the ledger. Each tenant has its own loader here
 * (src/job/run-job-loader.ts, worker mode: both lanes), drawing on its own app's quota row, with
 * `load.concurrency` batches in flight at most: every tenant with work has lanes in every worker,
 * so a tenant with 10M messages never takes the slots of one with 10k (their quotas are apart, and
 * so are their lanes). The loaders share the process's ledger pool and one pg-boss.
 *
 * A tenant's loader that stops on its own (its platform refused the key, an outage past
 * `load.giveUpAfterMs`) is logged and started again after {@link RESTART_AFTER_MS}; the others go on.
 */
import type { Logger } from 'pino'

import { runJobLoader } from '../job/run-job-loader.ts'
import { sleep } from '../load/sleep.ts'
import type { SharedBoss } from '../load/work-queue.ts'
import type { LedgerStore } from '../state/store.ts'
import { type FleetTenantJob, tenantContext } from './fleet-run.ts'
import { reasonOf } from './fleet-run-outcome.ts'

/** How long a tenant's loader that stopped on its own rests before it starts again. */
export const RESTART_AFTER_MS = 30_000

export interface FleetWorkerOptions {
  readonly store: LedgerStore
  readonly boss: SharedBoss
  readonly tenants: readonly FleetTenantJob[]
  readonly logger: Logger
  readonly signal: AbortSignal
  /** @default RESTART_AFTER_MS */
  readonly restartAfterMs?: number
}

/** Serves every tenant until the signal; resolves when every loader has stopped. */
export async function serveFleet(options: FleetWorkerOptions): Promise<void> {
  await Promise.all(options.tenants.map((t) => serveTenant(t, options)))
}

async function serveTenant(t: FleetTenantJob, options: FleetWorkerOptions): Promise<void> {
  const { signal } = options
  const log = options.logger.child({ tenant: t.tenantId, jobId: t.jobId })
  const ctx = tenantContext(t, options.store)
  while (!signal.aborted) {
    try {
      const outcome = await runJobLoader(ctx, { mode: 'worker', logger: log, signal, sharedBoss: options.boss })
      if (signal.aborted) {
        return
      }
      log.warn(
        { status: outcome.status, reason: outcome.error ? reasonOf(outcome.error) : undefined },
        "tenant's loader stopped; starting it again later",
      )
    } catch (err) {
      if (signal.aborted) {
        return
      }
      log.error({ err: reasonOf(err) }, "tenant's loader failed; starting it again later")
    }
    await sleep(options.restartAfterMs ?? RESTART_AFTER_MS, signal)
  }
}
