/**
 * `chatferry fleet run`: every tenant of a fleet planned (at most `planConcurrency` at once) and
 * loaded, all in parallel, in this process and on the fleet's workers (fleet-worker.ts). A tenant
 * IS a job: its own ledger rows in the shared Postgres ledger, its own app, its own quota row, its
 * own loader (src/job/run-job-loader.ts) with its own stop, outage watch and 429 pauses; so a
 * tenant's 429s, errors or broken source never stall another. Each tenant goes from its plan
 * straight to its load: it does not wait for the others' plans.
 *
 * Every tenant's attempt is a run of its job (src/job/job-run.ts, as `chatferry run`'s): one run
 * row (mode `run` or `delta`), its heartbeat while it plans and loads, the plan summary and the
 * loader's counters in its stats, finished with its status and the reason it failed (a refused
 * key or app, an empty source, an error). `fleet status` reads those rows. Rerunning resumes every tenant from its ledger. A tenant whose
 * source yields no rows at all in a full run fails, needing a fix (empty-source.ts), never `done`.
 */
import PQueue from 'p-queue'
import type { Logger } from 'pino'

import type { ResolvedConfig } from '../job/config.ts'
import { type LaneTicks, runJob } from '../job/job-run.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import type { LoadConfig } from '../load/config.ts'
import type { LedgerStore } from '../state/store.ts'
import { emptySourceReason } from './empty-source.ts'
import type { FleetMetrics, FleetTenantLabels } from './fleet-metrics.ts'
import { endOfLoad, needsFix, reasonOf, type TenantOutcome } from './fleet-run-outcome.ts'

/** One tenant as a job: its id, its job id in the ledger, its job configuration and its loader settings. */
export interface FleetTenantJob {
  readonly tenantId: string
  readonly jobId: string
  readonly config: ResolvedConfig
  readonly load: LoadConfig
}

export interface FleetRunOptions {
  readonly store: LedgerStore
  readonly tenants: readonly FleetTenantJob[]
  readonly mode: 'full' | 'delta'
  /** Delta runs: plan every source row each tenant's ledger never planned (`fleet run --delta --reconcile-keys`). */
  readonly reconcileKeys?: boolean
  /** Tenants planned at once (each holds one source snapshot while it plans). */
  readonly planConcurrency: number
  readonly logger: Logger
  /** Each tenant's lanes' counters, about once a second while they run (the fleet's metrics). */
  readonly ticks?: TenantTicks
  readonly signal: AbortSignal
  /** Called when a tenant starts planning, starts loading and ends. */
  readonly onTenant?: (tenantId: string, phase: 'planning' | 'loading' | 'ended', outcome?: TenantOutcome) => void
}

/** Runs every tenant to its end; never throws for one tenant's failure. */
export async function runFleet(options: FleetRunOptions): Promise<TenantOutcome[]> {
  const planSlots = new PQueue({ concurrency: Math.max(1, options.planConcurrency) })
  return Promise.all(options.tenants.map((t) => runTenant(t, options, planSlots)))
}

/** Where every tenant's lanes report their counters, with the tenant (the fleet's metrics: src/fleet/fleet-metrics.ts). */
export type TenantTicks = Pick<FleetMetrics, 'onTick' | 'onFilesTick' | 'onUpdatesTick'>

/** One tenant's lanes' ticks into `ticks`. */
export function tenantTicks(ticks: TenantTicks, t: FleetTenantLabels): LaneTicks {
  return {
    onTick: (c) => ticks.onTick(t, c),
    onFilesTick: (c) => ticks.onFilesTick(t, c),
    onUpdatesTick: (c) => ticks.onUpdatesTick(t, c),
  }
}

/** The job context of a tenant on the fleet's shared store (closing it leaves the store open). */
export function tenantContext(t: FleetTenantJob, store: LedgerStore): LedgerContext {
  return { config: t.config, jobId: t.jobId, load: t.load, store, close: async () => {} }
}

/** One tenant: the job's run (src/job/job-run.ts, its one run row), its end as the tenant's outcome. */
async function runTenant(t: FleetTenantJob, options: FleetRunOptions, planSlots: PQueue): Promise<TenantOutcome> {
  const { store, signal } = options
  const log = options.logger.child({ tenant: t.tenantId, jobId: t.jobId })
  const ctx = tenantContext(t, store)
  const end = async (outcome: Omit<TenantOutcome, 'tenantId' | 'jobId' | 'stats'>): Promise<TenantOutcome> => {
    const stats = await store.entityStats(t.jobId).catch(() => [])
    const full: TenantOutcome = { tenantId: t.tenantId, jobId: t.jobId, ...outcome, stats }
    options.onTenant?.(t.tenantId, 'ended', full)
    return full
  }
  try {
    const run = await runJob(ctx, {
      read: options.mode,
      reconcileKeys: options.reconcileKeys === true,
      role: 'fleet-run',
      logger: log,
      signal,
      errorText: reasonOf,
      judgeTarget: async (access) => {
        if (access.status === 'refused') {
          return `${access.message}; ${access.fix} (nothing was read or sent)`
        }
        if (access.status === 'unavailable') {
          log.warn(`${access.message}; going on (the loader waits for the platform)`)
        }
        return undefined
      },
      planSlot: (plan) =>
        planSlots.add(async () => {
          if (signal.aborted) {
            return undefined
          }
          options.onTenant?.(t.tenantId, 'planning')
          return plan()
        }),
      planned: async (plan) => {
        const items = (await store.entityStats(t.jobId)).reduce((n, e) => n + e.total, 0)
        const empty = emptySourceReason(t.tenantId, t.config.source, plan, options.mode, items)
        if (empty === undefined) {
          options.onTenant?.(t.tenantId, 'loading')
        }
        return empty
      },
      ...(options.ticks ? { ticks: tenantTicks(options.ticks, t) } : {}),
    })
    if (run.failedBecause !== undefined) {
      return await end({ state: 'failed', needsFix: true, reason: run.failedBecause })
    }
    if (run.loaded === undefined) {
      return await end({ state: 'stopped', needsFix: false, reason: 'stopped by a signal before its plan finished' })
    }
    const loaded = run.loaded
    const state = endOfLoad(loaded.status)
    return await end({
      state,
      needsFix: state === 'failed' && needsFix(loaded.error),
      ...(loaded.error ? { reason: reasonOf(loaded.error) } : state === 'stopped' ? { reason: 'stopped by a signal' } : {}),
    })
  } catch (err) {
    if (signal.aborted) {
      return end({ state: 'stopped', needsFix: false, reason: 'stopped by a signal' })
    }
    log.error({ err: reasonOf(err) }, 'tenant failed')
    return end({ state: 'failed', needsFix: needsFix(err), reason: reasonOf(err) })
  }
}
