/**
 * The key reconciliation of a delta (issue 24): the source's keys of an entity that the ledger
 * never planned — a row that became visible after an earlier delta read past its change time (a
 * long transaction, a replica's lag, an offline client's clock), a row of a table without a
 * change-time column inserted with an older time — are read and planned like new rows.
 *
 * Which keys: one keys-only read of the entity (`SourceSession.readKeys`) into the ledger's
 * temporary table, anti-joined with the job's items (`store.updatePlan.compareKeys`; the same read
 * serves the vanished-row comparison when that is due too). Their rows: the entity is read again
 * from its beginning in the same snapshot, and only the pages' rows with one of those legacy ids
 * are planned; the read stops once every one was found. When none is missing, the cost is the
 * keys-only read and the anti-join.
 *
 * When: every `delta.reconcileKeysEvery`th delta, always in the final delta, and now with
 * `run --delta --reconcile-keys` ({@link reconcileDue}).
 */
import type { Cursor, Page, SourceRow } from '../model/connector.ts'
import { type LegacyEntity, legacyIdOf, type LegacyRecordOf } from '../model/index.ts'
import { storableText } from '../state/index.ts'
import { DEFAULT_DELTA, reconcileDue } from './delta-config.ts'
import { planPage } from './plan-page.ts'
import type { PlanJobOptions, PlanRun, PlanSink } from './plan-types.ts'

/** Whether this run reconciles the keys, and the count of deltas since the last one (undefined: not a delta into a ledger). */
export async function reconciliationOf(options: PlanJobOptions, sink: PlanSink): Promise<{ due: boolean; deltasSince: number | undefined }> {
  if (options.mode !== 'delta' || !sink.resumable || !sink.compareKeys || !sink.deltasSinceReconciliation) {
    return { due: false, deltasSince: undefined }
  }
  const deltasSince = await sink.deltasSinceReconciliation()
  return { due: reconcileDue(options.delta ?? DEFAULT_DELTA, deltasSince, options.reconcileKeys === true), deltasSince }
}

/**
 * Reads `entity` again from its beginning and plans the rows whose legacy id is in `unplanned`,
 * each page with `cursor` (the entity's completed read: a crash here leaves it as it was). Returns
 * how many of them were found.
 */
export async function planUnplanned(run: PlanRun, entity: LegacyEntity, unplanned: readonly string[], cursor: Cursor): Promise<number> {
  const { session, signal } = run.options
  const wanted = new Set(unplanned)
  let found = 0
  for await (const page of session.read(entity, { pageSize: run.pageSize, ...(signal ? { signal } : {}) })) {
    signal?.throwIfAborted()
    const rows = (page.rows as readonly SourceRow<LegacyRecordOf[LegacyEntity]>[]).filter((r) => wanted.has(rowId(entity, r)))
    if (rows.length > 0) {
      found += rows.length
      await planPage(run, entity, { rows, cursor } as Page<unknown>, cursor, undefined)
    }
    if (found >= wanted.size) {
      break
    }
  }
  return found
}

/** The legacy id of a row as the ledger stores it: its record's, or the one its problem names. */
function rowId(entity: LegacyEntity, row: SourceRow<LegacyRecordOf[LegacyEntity]>): string {
  return storableText(row.ok ? legacyIdOf(entity, row.record as never) : row.legacyId)
}
