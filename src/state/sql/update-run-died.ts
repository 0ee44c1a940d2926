import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Marks a run whose process died as `interrupted`, ended at its last heartbeat, with why; only
 * while it is still `running` (a run that finished meanwhile keeps its own end). Returns 1 or 0.
 */
export async function updateRunDied(db: Kysely<StateDatabase>, runId: number, why: string): Promise<number> {
  const r = await db
    .updateTable('chatferry.runs')
    .set({ status: 'interrupted', finished_at: sql`heartbeat_at` as never, error: why })
    .where('id', '=', runId)
    .where('status', '=', 'running')
    .executeTakeFirst()
  return Number(r.numUpdatedRows)
}
