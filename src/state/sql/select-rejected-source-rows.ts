import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A user or group the planner rejected (its source row or its mapping), as the records that refer to it name it. */
export interface RejectedSourceRow {
  readonly legacyId: string
  /** `field: reason`, as recorded. */
  readonly message: string
}

/**
 * The job's users or groups whose source row (`SOURCE_ROW_INVALID`) or mapping (`MAPPING_INVALID`)
 * was rejected, accepted or not, in ledger order: a resumed run or a delta rejects a message or
 * membership that refers to one naming that reject, as the run that read the row did — never as an
 * unknown user or group.
 */
export async function selectRejectedSourceRows(db: Kysely<StateDatabase>, jobId: string, entity: 'users' | 'groups'): Promise<RejectedSourceRow[]> {
  const rows = await db
    .selectFrom('chatferry.items')
    .select(['legacy_id', 'last_error_message'])
    .where('job_id', '=', jobId)
    .where('entity', '=', entity)
    .where('status', '=', 'rejected')
    .where('last_error_code', 'in', ['SOURCE_ROW_INVALID', 'MAPPING_INVALID'])
    .orderBy('id')
    .execute()
  return rows.map((r) => ({ legacyId: r.legacy_id, message: r.last_error_message ?? 'rejected' }))
}
