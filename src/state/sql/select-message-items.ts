import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { LookupItemRow } from './select-lookup-items.ts'

/**
 * Reads the message items (not rejected) of the given legacy ids in ledger order: the thread
 * parents a page of replies refers to, planned on earlier pages or runs. One query per page.
 */
export async function selectMessageItems(db: Kysely<StateDatabase>, jobId: string, legacyIds: readonly string[]): Promise<LookupItemRow[]> {
  return db
    .selectFrom('chatferry.items')
    .select(['legacy_id', 'status', 'payload', 'last_error_message'])
    .where('job_id', '=', jobId)
    .where('entity', '=', 'messages')
    .where('status', '!=', 'rejected')
    .where(sql<boolean>`legacy_id = any(${[...legacyIds]}::text[])`)
    .orderBy('id')
    .execute()
}
