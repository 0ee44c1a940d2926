/**
 * What planning reads back from the ledger when a run resumes (the id map, the users and groups
 * planned so far, the thread parents of a page), so a resumed plan maps exactly like an
 * uninterrupted one. Read-only: planning writes through {@link LedgerStore.planPage}.
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { countMemberships } from './sql/count-memberships.ts'
import { selectCountedMembers } from './sql/select-counted-members.ts'
import { type IdMapRow, selectIdMap } from './sql/select-id-map.ts'
import type { KnownItemRow } from './sql/select-known-items.ts'
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
}

export function createPlanLookups(db: Kysely<StateDatabase>): PlanLookups {
  return {
    idMap: (jobId) => selectIdMap(db, jobId),
    items: (jobId, entity) => selectLookupItems(db, jobId, entity),
    rejectedRows: (jobId, entity) => selectRejectedSourceRows(db, jobId, entity),
    messages: (jobId, legacyIds) => selectMessageItems(db, jobId, legacyIds),
    memberships: (jobId) => countMemberships(db, jobId),
    countedMembers: (jobId, legacyIds) => selectCountedMembers(db, jobId, legacyIds),
  }
}
