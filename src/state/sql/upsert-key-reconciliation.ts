import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { KEY_RECONCILIATION_ROW } from './select-key-reconciliation.ts'

/**
 * Records, after a delta's read, how many deltas completed since the job's last key
 * reconciliation (0: this delta reconciled), in the job's `~keys` cursor row.
 */
export async function upsertKeyReconciliation(db: Kysely<StateDatabase>, jobId: string, deltas: number): Promise<void> {
  const cursor = JSON.stringify({ deltas })
  await sql`
    insert into chatferry.cursors (job_id, entity, cursor, watermark, updated_at)
    values (${jobId}, ${KEY_RECONCILIATION_ROW}, ${cursor}::jsonb, null, now())
    on conflict (job_id, entity) do update set cursor = excluded.cursor, updated_at = now()`.execute(db)
}
