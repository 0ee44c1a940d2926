import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A source row of users or groups the planner rejected, as the records that refer to it name it. */
export interface RejectedSourceRow {
  readonly legacyId: string
  /** `field: reason`, as recorded. */
  readonly message: string
}

/**
 * The job's users or groups whose source row was rejected (`SOURCE_ROW_INVALID`, accepted or not),
 * in ledger order: a resumed run or a delta rejects a message or membership that refers to one
 * naming that reject, as the run that read the row did — never as an unknown user.
 */
export async function selectRejectedSourceRows(db: Kysely<StateDatabase>, jobId: string, entity: 'users' | 'groups'): Promise<RejectedSourceRow[]> {
  const rows = await db
    .selectFrom('chatferry.items')
    .select(['legacy_id', 'last_error_message'])
    .where('job_id', '=', jobId)
    .where('entity', '=', entity)
    .where('status', '=', 'rejected')
    .where('last_error_code', '=', 'SOURCE_ROW_INVALID')
    .orderBy('id')
    .execute()
  return rows.map((r) => ({ legacyId: r.legacy_id, message: r.last_error_message ?? 'rejected' }))
}
