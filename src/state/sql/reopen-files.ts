import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * At the start of a files lane: applies the job's current `files.onFailure` to its failed files.
 * Under `wait` they are planned again with their attempts reset (a later run tries again; their
 * last error stays until it succeeds); under another policy they keep `failed` and take the policy
 * (their messages go under it). Returns how many were planned again.
 */
export async function reopenFiles(db: Kysely<StateDatabase>, jobId: string, onFailure: string): Promise<number> {
  const r = await sql<{ state: string }>`
    update chatferry.files set
      state = case when ${onFailure} = 'wait' then 'planned' else state end,
      attempts = case when ${onFailure} = 'wait' then 0 else attempts end,
      on_failure = case when ${onFailure} = 'wait' then null else ${onFailure} end,
      lease_owner = null, lease_until = null, updated_at = now()
    where job_id = ${jobId} and state = 'failed' and (${onFailure} = 'wait' or on_failure is distinct from ${onFailure})
    returning state`.execute(db)
  return r.rows.filter((row) => row.state === 'planned').length
}
