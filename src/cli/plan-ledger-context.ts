/**
 * How `plan` reaches the ledger. It changes no item, cursor or id decision; it reads the ledger
 * (the dry run's classification, the previous plan report) and keeps its own report there. So,
 * like `status`, it works while another process runs a job:
 *
 * - a Postgres ledger (`state.url`) and an embedded store nobody holds: opened (taken) as any
 *   command does (open-command-context.ts);
 * - an embedded store a live process holds: through that process's socket
 *   (ledger-read-socket.ts). The dry run's ledger reads are its answers, one query each; the thread
 *   parents the dry run keeps between pages go into a scratch file of this process
 *   (src/state/scratch-parents.ts), not into a temporary table that would hold the holder's one
 *   connection for the whole read; the report is appended by the holder (`savePlanReport`), so the
 *   next plan's diff and `verify`'s "actual vs plan" find it as they would otherwise.
 */
import type { PlanContext, PlanLedger } from '../job/run-plan.ts'
import { defaultJobId } from '../load/config.ts'
import { dryRunLedgerOver } from '../state/index.ts'
import { reachEmbedded } from './ledger-read-context.ts'
import type { PlanAsks } from './ledger-read-socket.ts'
import { loadConfig } from './load-config.ts'
import { type LockHolder, openCommandContext } from './open-command-context.ts'

export interface PlanCommandContext extends PlanContext {
  readonly store: PlanContext['store'] & { listJobs(): Promise<{ id: string }[]> }
  /** The live process whose embedded store this plan reads through, when another process holds it. */
  readonly holder?: LockHolder
  close(): Promise<void>
}

export interface PlanContextOptions {
  readonly config?: string
  readonly job?: string
}

export async function openPlanContext(options: PlanContextOptions): Promise<PlanCommandContext> {
  const config = loadConfig(options.config, process.env)
  if (config.state.url !== undefined) {
    return openCommandContext(options)
  }
  const jobId = options.job ?? process.env.CHATFERRY_JOB_ID ?? config.job?.id ?? defaultJobId(config.target.appId)
  return reachEmbedded<PlanCommandContext>(config.state.dir, {
    throughHolder: (remote, holder) => ({
      config,
      jobId,
      store: { ...planLedgerThrough(remote), listJobs: remote.listJobs, entityStats: remote.entityStats },
      holder,
      close: async () => remote.close(),
    }),
    takeIt: () => openCommandContext(options),
  })
}

/** The ledger as `plan` needs it, over the holder's answers. */
export function planLedgerThrough(asks: PlanAsks): PlanLedger {
  return {
    dryRun: dryRunLedgerOver({ idMap: asks.idMap, lookupItems: asks.lookupItems, knownItems: asks.knownItems, loadedItems: asks.loadedItems }),
    reports: {
      async save(kind, report) {
        if (kind !== 'plan') {
          throw new Error(`only a plan report can be kept through the process holding the embedded store, not a ${kind} report`)
        }
        await asks.savePlanReport(report)
      },
      latest: async <T>(jobId: string, kind: 'plan' | 'verify') => (await asks.latestReport(jobId, kind)) as T | undefined,
    },
    quota: { ensure: asks.chatBudgetEnsure, reserve: asks.chatBudgetReserve, pause: asks.chatBudgetPause },
  }
}
