/**
 * The planning half of `chatferry run` (and of the demo): open the configured source in one
 * snapshot, plan every entity into the ledger, and close the snapshot again before loading starts,
 * so no read transaction stays open for the days a load can take.
 */
import { dirname } from 'node:path'
import type { Logger } from 'pino'
import { createConnector, type SourceConfig } from '../../connectors/index.ts'
import { loadUserModule } from '../../mappings/index.ts'
import { ConfigError } from '../errors.ts'
import type { LedgerContext } from '../load/context.ts'
import { planJob, type PlanJobSummary } from './plan-job.ts'

export interface PlanFromSourceOptions {
  readonly mode?: 'full' | 'delta'
  readonly logger?: Logger
  readonly signal?: AbortSignal
  /** The run's clock. @default Date.now() */
  readonly now?: number
}

/** Plans the job's source into its ledger; returns what happened to every record. */
export async function planFromSource(ctx: LedgerContext, options: PlanFromSourceOptions = {}): Promise<PlanJobSummary> {
  const { config } = ctx
  if (config.source === undefined) {
    throw new ConfigError(config.file, [{ path: 'source', message: 'is required to read a legacy database (connector, url, …)' }])
  }
  const adjust = config.policies.module
    ? (await loadUserModule(config.policies.module, dirname(config.file))).adjust
    : undefined
  await ctx.store.ensureJob(ctx.jobId, config.target.appId)
  // The resolved config is deeply readonly; connectors only read their settings.
  const session = await createConnector(config.source as SourceConfig).open()
  try {
    return await planJob({
      jobId: ctx.jobId,
      store: ctx.store,
      session,
      policies: config.policies,
      now: options.now ?? Date.now(),
      pageSize: config.source.pageSize,
      mode: options.mode ?? 'full',
      ...(adjust ? { adjust } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.logger ? { logger: options.logger } : {}),
    })
  } finally {
    await session.close()
  }
}

/** A few lines a person reads in seconds: rows read, items planned, skips and rejects per entity. */
export function formatPlanSummary(summary: PlanJobSummary): string {
  const lines: string[] = []
  for (const [entity, s] of Object.entries(summary.entities)) {
    if (s.alreadyRead) {
      lines.push(`${entity.padEnd(9)} read completed by an earlier run`)
      continue
    }
    const skipped = Object.values(s.skipped).reduce((a, r) => a + r.count, 0)
    const rejected = Object.values(s.rejected).reduce((a, r) => a + r.count, 0)
    const l = s.ledger
    // Extra items (placeholders, the system user) come from other entities' records: they are in
    // the ledger counts but not in the source rows, so they are named separately.
    const extras = Object.entries(s.extras)
    lines.push(
      `${entity.padEnd(9)} ${String(s.sourceRows).padStart(8)} rows → ${l.inserted} new, ${l.updated} updated, ${l.unchanged} unchanged` +
        `${l.loadedButChanged ? `, ${l.loadedButChanged} changed after loading` : ''}, ${skipped} skipped, ${rejected} rejected` +
        `${extras.length ? ` (the item counts include ${extras.map(([k, v]) => `${v} ${k}`).join(', ')} created for other records)` : ''}`,
    )
    for (const [reason, r] of Object.entries(s.rejected)) {
      lines.push(`            rejected ${r.count} × ${reason} (e.g. ${r.samples.join(', ')})`)
    }
  }
  const policyLines = Object.entries(summary.outcomes)
    .map(([policy, outcomes]) => `  ${policy}: ${Object.entries(outcomes).map(([o, n]) => `${o} ${n}`).join(', ')}`)
    .sort()
  if (policyLines.length > 0) lines.push('policy outcomes:', ...policyLines)
  return `${lines.join('\n')}\n`
}
