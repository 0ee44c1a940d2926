import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Settles the job's planned files `skipped` with `reason` (a run under `files.mode` reference or
 * omit after a plan under rehost): their messages stop waiting and keep the legacy URL. Returns how many.
 */
export async function skipOpenFiles(db: Kysely<StateDatabase>, jobId: string, reason: string): Promise<number> {
  const r = await sql`
    update chatferry.files set state = 'skipped', last_error_cause = null, last_error_reason = ${reason},
      lease_owner = null, lease_until = null, updated_at = now()
    where job_id = ${jobId} and state = 'planned'
    returning id`.execute(db)
  return r.rows.length
}
