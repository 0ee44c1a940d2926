/**
 * The ledger as the dry run (`chatferry plan`) sees it: read-only. A dry-run session holds one
 * dedicated connection for the whole run; on it the ledger's items and id map are only read, and
 * the thread parents of earlier pages go into a temporary table of that connection (memory stays
 * flat for millions of messages), created empty at the start and dropped at the end, and so do
 * the source's keys of a vanished-item comparison. Nothing in the ledger's own tables changes. The
 * conflict policy's question (`conflicts`: which intents a delta would hold back because their item
 * changed on the platform) is asked with the rule a delta records by (conflict-hold.ts), read-only.

 */
import type { Kysely } from 'kysely'

import { type ConflictCandidate, type ConflictPreview, previewConflicts } from './conflict-hold.ts'
import type { ConflictPolicy, StateDatabase } from './schema.ts'
import { createPlanParentsTable } from './sql/create-plan-parents-table.ts'
import { dropPlanParentsTable } from './sql/drop-plan-parents-table.ts'
import { insertPlanParents, type PlanParentRow } from './sql/insert-plan-parents.ts'
import { selectHasItems } from './sql/select-has-items.ts'
import { type IdMapRow, selectIdMap } from './sql/select-id-map.ts'
import { type KnownItemRow, selectKnownItems } from './sql/select-known-items.ts'
import { type LoadedItemRow, selectLoadedItems } from './sql/select-loaded-items.ts'
import { type LookupItemRow, selectLookupItems } from './sql/select-lookup-items.ts'
import { selectPlanParents } from './sql/select-plan-parents.ts'
import { scanVanished, type VanishedGate, type VanishedItemRow, type VanishedScan } from './vanished-scan.ts'

export type { ConflictCandidate, ConflictPreview, KnownItemRow, LoadedItemRow, PlanParentRow }

/** What a dry run reads and keeps while it runs; every call goes through the session's connection. */
export interface DryRunSession {
  /** The job's id decisions, in the order they were made. */
  idMap(jobId: string): Promise<IdMapRow[]>
  /** The ledger's items for these target keys (`keys[i]` with the new payload hash `hashes[i]`). */
  knownItems(jobId: string, entity: string, keys: readonly string[], hashes: readonly string[]): Promise<KnownItemRow[]>
  /**
   * Whether the ledger holds any item of this job and entity: when it holds none, every item is new
   * and the dry run neither hashes nor looks up a page's items. Absent when the ledger is read
   * through another process (then every page is looked up).
   */
  hasItems?(jobId: string, entity: string): Promise<boolean>
  /** Users or groups planned or skipped so far (not rejected), in ledger order. */
  lookupItems(jobId: string, entity: 'users' | 'groups'): Promise<LookupItemRow[]>
  /** Keeps a page's messages as thread parents for later pages (the session's temporary table). */
  keepParents(rows: readonly PlanParentRow[]): Promise<void>
  /** Thread parents kept by earlier pages, with these legacy ids. */
  parents(legacyIds: readonly string[]): Promise<PlanParentRow[]>
  /** Loaded items (done, removal not planned) of these legacy ids: those a skip now would remove. */
  loadedItems(jobId: string, entity: string, legacyIds: readonly string[]): Promise<LoadedItemRow[]>
  /**
   * The key-set comparison, read-only: each page of loaded items the source no longer holds goes to
   * `onPage` (unless `allow` refuses).
   */
  vanished(
    jobId: string,
    entity: string,
    sourceKeys: AsyncIterable<readonly string[]>,
    onPage: (items: VanishedItemRow[]) => void,
    allow?: VanishedGate,
  ): Promise<VanishedScan>
  /**
   * Which of these intents the conflict policy would act on (held back, dropped, or sent over a
   * change made on the platform), without recording anything.
   */
  conflicts<T extends ConflictCandidate>(jobId: string, entity: string, intents: readonly T[], policy: ConflictPolicy): Promise<ConflictPreview<T>[]>
}

export interface DryRunLedger {
  /** Runs `work` in a session on one dedicated connection; the session's temporary table is dropped after. */
  session<T>(work: (session: DryRunSession) => Promise<T>): Promise<T>
}

export function createDryRunLedger(db: Kysely<StateDatabase>): DryRunLedger {
  return {
    session: (work) =>
      db.connection().execute(async (conn) => {
        await createPlanParentsTable(conn)
        try {
          return await work({
            idMap: (jobId) => selectIdMap(conn, jobId),
            knownItems: (jobId, entity, keys, hashes) => selectKnownItems(conn, jobId, entity, keys, hashes),
            hasItems: (jobId, entity) => selectHasItems(conn, jobId, entity),
            lookupItems: (jobId, entity) => selectLookupItems(conn, jobId, entity),
            keepParents: (rows) => insertPlanParents(conn, rows),
            parents: (legacyIds) => selectPlanParents(conn, legacyIds),
            loadedItems: (jobId, entity, legacyIds) => selectLoadedItems(conn, jobId, entity, legacyIds, false),
            vanished: (jobId, entity, sourceKeys, onPage, allow) =>
              scanVanished(conn, jobId, entity, sourceKeys, async (items) => onPage(items), allow),
            conflicts: (jobId, entity, intents, policy) => previewConflicts(conn, jobId, entity, intents, policy),
          })
        } finally {
          await dropPlanParentsTable(conn).catch(() => {})
        }
      }),
  }
}
