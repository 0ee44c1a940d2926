/**
 * `chatferry fleet run`: every tenant of a fleet planned (at most `planConcurrency` at once) and
 * loaded, all in parallel, in this process and on the fleet's workers (fleet-worker.ts). A tenant
 * IS a job: its own ledger rows in the shared Postgres ledger, its own app, its own quota row, its
 * own loader (src/job/run-job-loader.ts) with its own stop, outage watch and 429 pauses; so a
 * tenant's 429s, errors or broken source never stall another. Each tenant goes from its plan
 * straight to its load: it does not wait for the others' plans.
 *
 * Every tenant's attempt is a run row of its job (mode `run` or `delta`), written like `chatferry
 * run` writes its own: started before the pre-flight, its heartbeat while it plans and loads, the
 * plan summary in its stats once planned, finished with its status and the reason it failed.
 * `fleet status` reads those rows. Rerunning resumes every tenant from its ledger. A tenant whose
 * source yields no rows at all in a full run fails, needing a fix (empty-source.ts), never `done`.
 */
import PQueue from 'p-queue'
import type { Logger } from 'pino'

import { checkTargetAccess } from '../job/check-target-access.ts'
import type { ResolvedConfig } from '../job/config.ts'
import type { LedgerContext } from '../job/ledger-context.ts'
import { planFromSource } from '../job/plan-from-source.ts'
import { runJobLoader } from '../job/run-job-loader.ts'
import type { LoadConfig } from '../load/config.ts'
import { hostKey } from '../load/host-key.ts'
import type { LoaderCounters } from '../load/loader.ts'
import type { RunStatus } from '../state/schema.ts'
import type { LedgerStore } from '../state/store.ts'
import { emptySourceReason } from './empty-source.ts'
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
  /** A tenant's loader counters, about once a second while it loads (the fleet's metrics). */
  readonly onLoaderTick?: (tenant: { tenantId: string; jobId: string }, counters: LoaderCounters) => void
  readonly signal: AbortSignal
  /** Called when a tenant starts planning, starts loading and ends. */
  readonly onTenant?: (tenantId: string, phase: 'planning' | 'loading' | 'ended', outcome?: TenantOutcome) => void
}

/** How often a tenant's run row is touched while it plans (the loader keeps its own heartbeat). */
const HEARTBEAT_MS = 5000

/** Runs every tenant to its end; never throws for one tenant's failure. */
export async function runFleet(options: FleetRunOptions): Promise<TenantOutcome[]> {
  const planSlots = new PQueue({ concurrency: Math.max(1, options.planConcurrency) })
  return Promise.all(options.tenants.map((t) => runTenant(t, options, planSlots)))
}

/** The job context of a tenant on the fleet's shared store (closing it leaves the store open). */
export function tenantContext(t: FleetTenantJob, store: LedgerStore): LedgerContext {
  return { config: t.config, jobId: t.jobId, load: t.load, store, close: async () => {} }
}

async function runTenant(t: FleetTenantJob, options: FleetRunOptions, planSlots: PQueue): Promise<TenantOutcome> {
  const { store, signal } = options
  const log = options.logger.child({ tenant: t.tenantId, jobId: t.jobId })
  const ctx = tenantContext(t, store)
  let runId: number | undefined
  let heartbeat: NodeJS.Timeout | undefined
  const end = async (outcome: Omit<TenantOutcome, 'tenantId' | 'jobId' | 'stats'>): Promise<TenantOutcome> => {
    const stats = await store.entityStats(t.jobId).catch(() => [])
    const full: TenantOutcome = { tenantId: t.tenantId, jobId: t.jobId, ...outcome, stats }
    if (runId !== undefined) {
      await store.finishRun(runId, runStatus(full), { stats }, outcome.reason).catch((err: unknown) => log.warn({ err }, 'recording the end failed'))
    }
    options.onTenant?.(t.tenantId, 'ended', full)
    return full
  }
  try {
    await store.ensureJob(t.jobId, t.config.target.appId)
    runId = await store.startRun(t.jobId, options.mode === 'delta' ? 'delta' : 'run', `${hostKey()}/${process.pid}/fleet-run`)
    const id = runId
    heartbeat = setInterval(() => void store.heartbeatRun(id).catch(() => {}), HEARTBEAT_MS)
    const access = await checkTargetAccess(t.config, { signal })
    if (access.status === 'refused') {
      return await end({ state: 'failed', needsFix: true, reason: `${access.message}; ${access.fix} (nothing was read or sent)` })
    }
    if (access.status === 'unavailable') {
      log.warn(`${access.message}; going on (the loader waits for the platform)`)
    }
    const plan = await planSlots.add(async () => {
      if (signal.aborted) {
        return undefined
      }
      options.onTenant?.(t.tenantId, 'planning')
      return planFromSource(ctx, { mode: options.mode, reconcileKeys: options.reconcileKeys === true, logger: log, signal })
    })
    if (plan === undefined || signal.aborted) {
      return await end({ state: 'stopped', needsFix: false, reason: 'stopped by a signal before its plan finished' })
    }
    await store.heartbeatRun(id, { plan })
    const items = (await store.entityStats(t.jobId)).reduce((n, e) => n + e.total, 0)
    const empty = emptySourceReason(t.tenantId, t.config.source, plan, options.mode, items)
    if (empty !== undefined) {
      return await end({ state: 'failed', needsFix: true, reason: empty })
    }
    options.onTenant?.(t.tenantId, 'loading')
    const onTick = options.onLoaderTick
    const loaded = await runJobLoader(ctx, {
      mode: 'load',
      logger: log,
      signal,
      ...(onTick ? { onTick: (c: LoaderCounters) => onTick(t, c) } : {}),
    })
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
  } finally {
    clearInterval(heartbeat)
  }
}

function runStatus(o: TenantOutcome): Exclude<RunStatus, 'running'> {
  switch (o.state) {
    case 'done':
      return 'succeeded'
    case 'rejected':
      return 'rejected'
    case 'stopped':
      return 'interrupted'
    default:
      return 'failed'
  }
}
