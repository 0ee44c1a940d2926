/**
 * What planning reads back from the ledger when a run resumes (the id map, the users and groups
 * planned so far, the thread parents of a page), so a resumed plan maps exactly like an
 * uninterrupted one; and the dry run's classification read, one query at a time, for a `plan` that
 * reads an embedded ledger through the process holding it. Read-only: planning writes through
 * {@link LedgerStore.planPage}.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countMemberships } from './sql/count-memberships.ts'
import { selectCountedMembers } from './sql/select-counted-members.ts'
import { type IdMapRow, selectIdMap } from './sql/select-id-map.ts'
import { type KnownItemRow, selectKnownItems } from './sql/select-known-items.ts'
import { type LoadedItemRow, selectLoadedItems } from './sql/select-loaded-items.ts'
import { type LookupItemRow, selectLookupItems } from './sql/select-lookup-items.ts'
import { selectMessageItems } from './sql/select-message-items.ts'
import { type RejectedSourceRow, selectRejectedSourceRows } from './sql/select-rejected-source-rows.ts'

export type { IdMapRow, KnownItemRow, LookupItemRow, RejectedSourceRow }

export interface PlanLookups {
  /** The job's id decisions, in the order they were made. */
  idMap(jobId: string): Promise<IdMapRow[]>
  /** Users or groups planned or skipped so far (not rejected), in ledger order. */
  items(jobId: string, entity: 'users' | 'groups'): Promise<LookupItemRow[]>
  /** Users or groups whose source row was rejected, in ledger order (what records referring to them name). */
  rejectedRows(jobId: string, entity: 'users' | 'groups'): Promise<RejectedSourceRow[]>
  /** Planned or skipped messages with these legacy ids (thread parents), in ledger order. */
  messages(jobId: string, legacyIds: readonly string[]): Promise<LookupItemRow[]>
  /** Members planned, in flight or loaded, counted per group and per user (the member limits). */
  memberships(jobId: string): Promise<{ kind: 'group' | 'user'; id: string; n: number }[]>
  /** Of these legacy member ids, those {@link memberships} counts already. */
  countedMembers(jobId: string, legacyIds: readonly string[]): Promise<string[]>
  /**
   * The ledger's items for these target keys (`keys[i]` with the new payload hash `hashes[i]`):
   * what a dry-run session's `knownItems` reads, on any connection (`plan` through the holder of
   * an embedded store, src/cli/ledger-read-socket.ts).
   */
  knownItems(jobId: string, entity: string, keys: readonly string[], hashes: readonly string[]): Promise<KnownItemRow[]>
  /** Loaded items of these legacy ids whose removal is not planned (what a dry-run session's `loadedItems` reads, on any connection). */
  loadedItems(jobId: string, entity: string, legacyIds: readonly string[]): Promise<LoadedItemRow[]>
}

export function createPlanLookups(db: Kysely<StateDatabase>): PlanLookups {
  return {
    idMap: (jobId) => selectIdMap(db, jobId),
    items: (jobId, entity) => selectLookupItems(db, jobId, entity),
    rejectedRows: (jobId, entity) => selectRejectedSourceRows(db, jobId, entity),
    messages: (jobId, legacyIds) => selectMessageItems(db, jobId, legacyIds),
    memberships: (jobId) => countMemberships(db, jobId),
    countedMembers: (jobId, legacyIds) => selectCountedMembers(db, jobId, legacyIds),
    knownItems: (jobId, entity, keys, hashes) => selectKnownItems(db, jobId, entity, keys, hashes),
    loadedItems: (jobId, entity, legacyIds) => selectLoadedItems(db, jobId, entity, legacyIds, false),
  }
}
