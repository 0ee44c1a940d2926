/**
 * Packing: planned items of the current entity into full batches, each a ledger row (a unit of
 * work of src/state/lease-units.ts, claimable once the packing commits), up to the queue depth. Messages that aged out of the retention
 * window since planning are settled by the retention policy instead (retention-at-pack.ts). The
 * SQL: src/state/batch-ledger.ts `pack`.
 */
import type { LoaderRun } from './loader-types.ts'
import { ageOutRule, DEFAULT_RETENTION_POLICY } from './retention-at-pack.ts'

/** Packs batches of the current entity up to the queue depth; returns how many (0 when another process is packing). */
export async function packBatches(run: LoaderRun): Promise<number> {
  const { options } = run
  const policy = options.retention ?? DEFAULT_RETENTION_POLICY
  const ageOut = ageOutRule(policy, (options.now ?? Date.now)(), run.settings.retentionMarginMs)
  const packed = await run.store.batches.pack(run.jobId, {
    depth: run.depth,
    itemsPerRequest: options.itemsPerRequest,
    ...(ageOut !== undefined ? { ageOut } : {}),
  })
  if (packed.agedOut > 0) {
    run.counters.itemsAgedOut += packed.agedOut
    run.log.info(
      { agedOut: packed.agedOut, retentionDays: policy.retentionDays },
      'messages aged out of the retention window since planning: skipped by policy, not sent',
    )
  }
  return packed.batches
}
