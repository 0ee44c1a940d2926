import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What a planner needs of a planned or skipped item to map the records that refer to it. */
export interface LookupItemRow {
  readonly legacy_id: string
  readonly status: string
  /** The import item's JSON text; null for a skipped item. */
  readonly payload: string | null
  /** A skip's reason (`policy:<name>: …`), naming the policy dependents report. */
  readonly last_error_message: string | null
}

/**
 * Reads every item of one entity that is not rejected (`chatferry.items`), in ledger order, so a
 * resumed plan rebuilds the users or groups earlier pages planned. Callers keep the first item of
 * each legacy id.
 */
export async function selectLookupItems(db: Kysely<StateDatabase>, jobId: string, entity: 'users' | 'groups'): Promise<LookupItemRow[]> {
  return db
    .selectFrom('chatferry.items')
    .select(['legacy_id', 'status', 'payload', 'last_error_message'])
    .where('job_id', '=', jobId)
    .where('entity', '=', entity)
    .where('status', '!=', 'rejected')
    .orderBy('id')
    .execute()
}
