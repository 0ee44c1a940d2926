import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * The `chatferry.cursors` row of a job's key reconciliation: not an entity's read, so its entity is
 * `~keys` (no legacy entity starts with `~`); its cursor holds `{ deltas: n }`, the deltas that
 * completed their read since the last reconciliation.
 */
export const KEY_RECONCILIATION_ROW = '~keys'

/** How many deltas completed their read since the job's last key reconciliation (0 when none is recorded). */
export async function selectKeyReconciliation(db: Kysely<StateDatabase>, jobId: string): Promise<number> {
  const r = await sql<{ deltas: unknown }>`
    select cursor -> 'deltas' as deltas from chatferry.cursors where job_id = ${jobId} and entity = ${KEY_RECONCILIATION_ROW}`.execute(db)
  const n = r.rows[0]?.deltas
  return typeof n === 'number' && Number.isInteger(n) && n >= 0 ? n : 0
}
