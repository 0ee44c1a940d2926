import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** One failed attempt at a file: its cause and reason, and whether (and when) to try again. */
export interface FileAttemptFailure {
  readonly cause: string
  readonly reason: string
  /** Try again in this run when attempts remain (after `retryAfterMs`). */
  readonly retryable: boolean
  readonly retryAfterMs: number
  /** `files.attempts`: the file is `failed` once this many attempts failed. */
  readonly maxAttempts: number
  /** `files.onFailure`, recorded on a file that ends `failed` (it decides what its messages do). */
  readonly onFailure: string
}

/**
 * Records a failed attempt, fenced by the claim: the file stays `planned` (its lease running out
 * after the backoff, so no holder claims it before) while it is retryable and attempts remain, and
 * is settled `failed` with its cause, reason and the failure policy otherwise. Returns the state it
 * is left in, or undefined when another holder took the file over (nothing written).
 */
export async function settleFileFailed(
  db: Kysely<StateDatabase>,
  args: { id: number; owner: string; fence: number; failure: FileAttemptFailure },
): Promise<'planned' | 'failed' | undefined> {
  const f = args.failure
  const r = await sql<{ state: 'planned' | 'failed' }>`
    update chatferry.files set attempts = attempts + 1, last_error_cause = ${f.cause}, last_error_reason = ${f.reason},
      state = case when ${f.retryable} and attempts + 1 < ${f.maxAttempts} then 'planned' else 'failed' end,
      on_failure = case when ${f.retryable} and attempts + 1 < ${f.maxAttempts} then null else ${f.onFailure} end,
      lease_owner = null,
      lease_until = case when ${f.retryable} and attempts + 1 < ${f.maxAttempts} then now() + ${f.retryAfterMs} * interval '1 millisecond' end,
      updated_at = now()
    where id = ${args.id} and lease_owner = ${args.owner} and fence = ${args.fence} and state = 'planned'
    returning state`.execute(db)
  return r.rows[0]?.state
}
