/**
 * The planning half of `chatferry run` (and of the demo): open the configured source in one
 * snapshot, plan every entity into the ledger, and close the snapshot again before loading starts,
 * so no read transaction stays open for the days a load can take.
 */
import type { Logger } from 'pino'

import { planJob, type PlanJobOptions, type PlanJobSummary } from '../plan/plan-job.ts'
import type { LedgerContext } from './ledger-context.ts'
import { openSource } from './open-source.ts'

export interface PlanFromSourceOptions {
  readonly mode?: 'full' | 'delta'
  /** Delta runs: also compare the messages' keys with the ledger (`run --delta --detect-deletes`). */
  readonly detectDeletes?: boolean
  /** Delta runs: plan every source key the ledger never planned now (`run --delta --reconcile-keys`, the final delta). */
  readonly reconcileKeys?: boolean
  readonly logger?: Logger
  readonly signal?: AbortSignal
  /** The run's clock. @default Date.now() */
  readonly now?: number
  /** Called after every page, for progress. */
  readonly onPage?: PlanJobOptions['onPage']
}

/** Plans the job's source into its ledger; returns what happened to every record. */
export async function planFromSource(ctx: LedgerContext, options: PlanFromSourceOptions = {}): Promise<PlanJobSummary> {
  const { config } = ctx
  const source = await openSource(config, 'read a legacy database')
  await ctx.store.ensureJob(ctx.jobId, config.target.appId)
  return source.read((session) =>
    planJob({
      jobId: ctx.jobId,
      store: ctx.store,
      session,
      policies: config.policies,
      files: { mode: config.files.mode, maxBytes: config.files.maxBytes },
      now: options.now ?? Date.now(),
      pageSize: source.pageSize,
      memberLimits: config.target.limits,
      mode: options.mode ?? 'full',
      changes: config.changes,
      detectDeletes: options.detectDeletes === true,
      delta: config.delta,
      reconcileKeys: options.reconcileKeys === true,
      ...(source.adjust ? { adjust: source.adjust } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
      ...(options.onPage ? { onPage: options.onPage } : {}),
    }),
  )
}
