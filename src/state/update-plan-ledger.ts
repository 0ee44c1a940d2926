/**
 * `store.updatePlan`: the planning side of changes to items already on the platform (issue 13).
 * Planning records update intents (`chatferry.updates`) — a changed done item's intents in the
 * transaction of its page (`planPage` with a classifier), a vanished item's here — and the reports
 * count them. The update lane (`update-lane-ledger.ts`) drains the planned ones.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countUpdates, type UpdateCountRow } from './sql/count-updates.ts'
import { addRecorded, insertUpdateIntents, noUpdates, type RecordedUpdates, type UpdateIntent } from './sql/insert-update-intents.ts'
import { selectKeyReconciliation } from './sql/select-key-reconciliation.ts'
import { selectUpdateSamples, type UpdateSampleRow } from './sql/select-update-samples.ts'
import { VANISHED_REASON } from './sql/select-vanished-items.ts'
import { updateItemsVanished } from './sql/update-items-vanished.ts'
import { upsertKeyReconciliation } from './sql/upsert-key-reconciliation.ts'
import { scanKeys, type VanishedGate, type VanishedItemRow } from './vanished-scan.ts'

export type { RecordedUpdates, UpdateCountRow, UpdateIntent, UpdateSampleRow, VanishedGate, VanishedItemRow }
export { addRecorded, noUpdates, VANISHED_REASON }

/** What a vanished-item comparison found and recorded. */
export interface VanishedOutcome extends RecordedUpdates {
  /** Done items whose legacy id the source no longer holds (not counted before). */
  vanished: number
  /** Done items the comparison looked at. */
  loaded: number
  /** True when the gate refused the comparison's result: nothing was recorded. */
  refused: boolean
}

/** What one read of the source's keys found (`compareKeys`). */
export interface KeyComparison {
  /** Absent when vanished items were not asked for. */
  readonly vanished: VanishedOutcome | undefined
  /** The source's legacy ids the ledger holds no item of (any status); empty when not asked for. */
  readonly unplanned: string[]
}

/** Turns a page of vanished items into the intents their policy asks for (pure; see `src/plan/vanished-intents.ts`). */
export type VanishedDecider = (items: readonly VanishedItemRow[]) => UpdateIntent[]

export interface UpdatePlanLedger {
  /** Records intents of one entity in one transaction (see `insert-update-intents.ts` for supersede and repeat rules). */
  record(jobId: string, entity: string, intents: readonly UpdateIntent[]): Promise<RecordedUpdates>
  /** The job's update intents counted per entity, kind, policy and status. */
  counts(jobId: string): Promise<UpdateCountRow[]>
  /** The first `perKind` intents of each entity, kind and status (legacy id, target key, reason). */
  samples(jobId: string, perKind: number): Promise<UpdateSampleRow[]>
  /**
   * The key-set comparison: `sourceKeys` (pages of the legacy ids the source holds, one snapshot)
   * against the job's done items of `entity`, on one dedicated connection. Each page of vanished
   * items is handed to `decide` and its intents recorded in one transaction; an applied removal
   * marks its item `vanished_at`, so it is planned once and a row that comes back is re-added.
   * `allow` sees how many of how many loaded items are gone before anything is recorded; when it
   * says no, nothing is (`refused`).
   */
  recordVanished(
    jobId: string,
    entity: string,
    sourceKeys: AsyncIterable<readonly string[]>,
    decide: VanishedDecider,
    allow?: VanishedGate,
  ): Promise<VanishedOutcome>
  /**
   * One read of `sourceKeys` for what is asked: the vanished items as {@link recordVanished} records
   * them, and/or the source's keys the ledger never planned (the key reconciliation, any item status).
   */
  compareKeys(
    jobId: string,
    entity: string,
    sourceKeys: AsyncIterable<readonly string[]>,
    want: { readonly vanished?: { readonly decide: VanishedDecider; readonly allow?: VanishedGate }; readonly unplanned?: boolean },
  ): Promise<KeyComparison>
  /** How many deltas completed their read since the job's last key reconciliation. */
  deltasSinceReconciliation(jobId: string): Promise<number>
  /** Records that count after a delta's read (0: it reconciled the keys). */
  recordDeltasSinceReconciliation(jobId: string, deltas: number): Promise<void>
}

export function createUpdatePlanLedger(db: Kysely<StateDatabase>): UpdatePlanLedger {
  const compareKeys: UpdatePlanLedger['compareKeys'] = (jobId, entity, sourceKeys, want) =>
    db.connection().execute(async (conn) => {
      const out: VanishedOutcome = { ...noUpdates(), vanished: 0, loaded: 0, refused: false }
      const onPage = async (items: VanishedItemRow[]) => {
        const intents = (want.vanished as { decide: VanishedDecider }).decide(items)
        await conn.transaction().execute(async (trx) => {
          addRecorded(out, await insertUpdateIntents(trx, jobId, entity, intents))
          const removed = intents.filter((i) => i.policy === 'apply').map((i) => i.targetKey)
          await updateItemsVanished(trx, jobId, entity, removed)
        })
      }
      const scan = await scanKeys(conn, jobId, entity, sourceKeys, {
        ...(want.vanished ? { vanished: { onPage, ...(want.vanished.allow ? { allow: want.vanished.allow } : {}) } } : {}),
        unplanned: want.unplanned === true,
      })
      return { vanished: scan.vanished ? { ...out, ...scan.vanished } : undefined, unplanned: scan.unplanned }
    })
  return {
    record: (jobId, entity, intents) => db.transaction().execute((trx) => insertUpdateIntents(trx, jobId, entity, intents)),
    counts: (jobId) => countUpdates(db, jobId),
    samples: (jobId, perKind) => selectUpdateSamples(db, jobId, perKind),
    recordVanished: async (jobId, entity, sourceKeys, decide, allow) =>
      (await compareKeys(jobId, entity, sourceKeys, { vanished: { decide, ...(allow ? { allow } : {}) } })).vanished as VanishedOutcome,
    compareKeys,
    deltasSinceReconciliation: (jobId) => selectKeyReconciliation(db, jobId),
    recordDeltasSinceReconciliation: (jobId, deltas) => upsertKeyReconciliation(db, jobId, deltas),
  }
}
