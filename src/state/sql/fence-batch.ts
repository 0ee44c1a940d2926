import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What one claim of a batch did: its requests and the last answer's facts. */
export interface BatchReport {
  readonly batchId: number
  /** The lease token of the claim. */
  readonly token: string
  readonly requests: number
  readonly rateLimited: number
  readonly firstSentAt: number | undefined
  readonly lastStatus: number | undefined
  readonly lastLatencyMs: number | undefined
  readonly lastRetryAfterMs: number | undefined
}

/**
 * Records a claim's outcome on its batch row, **fenced**: only when the row still holds the
 * claim's lease token and the lease has not expired. Returns whether it did; when it did not,
 * another worker owns the batch now and the caller must record nothing else (roll back).
 * `open` hands the batch back (not settled; its lease ends, and it can be claimed again after
 * `retryDelaySeconds`: `../lease-units.ts`); `split` and `settled` finish it.
 */
export async function fenceBatch(
  db: Kysely<StateDatabase>,
  c: BatchReport,
  update: { status: 'open' | 'split' | 'settled'; errorCode?: string; errorMessage?: string; retryDelaySeconds?: number },
): Promise<boolean> {
  const r = await sql`
    update chatferry.batches set
      status = ${update.status},
      requests = requests + ${c.requests}, rate_limited = rate_limited + ${c.rateLimited},
      http_status = ${c.lastStatus ?? null}, latency_ms = ${c.lastLatencyMs ?? null},
      retry_after_ms = coalesce(${c.lastRetryAfterMs ?? null}, retry_after_ms),
      error_code = ${update.errorCode ?? null},
      error_message = ${update.errorMessage ?? null},
      first_sent_at = coalesce(first_sent_at, ${c.firstSentAt === undefined ? null : new Date(c.firstSentAt).toISOString()}::timestamptz),
      settled_at = case when ${update.status} = 'open' then settled_at else now() end,
      lease_token = case when ${update.status} = 'open' then null else lease_token end,
      lease_owner = case when ${update.status} = 'open' then null else lease_owner end,
      lease_expires_at = case when ${update.status} = 'open'
        then now() + ${update.retryDelaySeconds ?? 0} * interval '1 second' else lease_expires_at end
    where id = ${c.batchId} and lease_token = ${c.token}::uuid and lease_expires_at > now()`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}
