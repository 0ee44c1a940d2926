import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { BatchReport } from './fence-batch.ts'

/** The fate of one item from the platform's answer. */
export interface ItemSettlement {
  /** The ledger row id. */
  readonly id: number
  /** `planned`: the answer did not mention it; it goes back to be packed again. */
  readonly status: 'done' | 'rejected' | 'planned'
  readonly doneReason: 'created' | 'already_present' | null
  readonly code: string | null
  readonly message: string | null
  /** The payload hash that was sent: recorded as `loaded_hash` when done. */
  readonly hash: string | null
  /** The platform's id of the item from its success answer (messages: `data.id`), recorded as `items.platform_id`. */
  readonly platformId?: string | null
}

/** A batch whose answer arrived: its report and the fate of each of its items. */
export interface BatchSettlement {
  readonly report: BatchReport
  readonly items: readonly ItemSettlement[]
}

/**
 * Settles several answered batches in one statement: each batch row is updated only when it
 * still holds its claim's token and an unexpired lease (fencing), and only the items of the
 * batches that passed are updated (the join on `f`). Returns the ids of the batches settled; the
 * others belong to another worker now, and nothing of theirs was written.
 */
export async function settleBatches(db: Kysely<StateDatabase>, jobId: string, group: readonly BatchSettlement[]): Promise<Set<number>> {
  const b = { ids: [] as number[], tokens: [] as string[], requests: [] as number[], rateLimited: [] as number[] }
  const bStatus: (number | null)[] = []
  const bLatency: (number | null)[] = []
  const bRetryAfter: (number | null)[] = []
  const bFirstSent: (string | null)[] = []
  const i = { batchOf: [] as number[], ids: [] as number[], statuses: [] as string[], reasons: [] as (string | null)[] }
  const codes: (string | null)[] = []
  const messages: (string | null)[] = []
  const hashes: (string | null)[] = []
  const platformIds: (string | null)[] = []
  for (const { report: c, items } of group) {
    b.ids.push(c.batchId)
    b.tokens.push(c.token)
    b.requests.push(c.requests)
    b.rateLimited.push(c.rateLimited)
    bStatus.push(c.lastStatus ?? null)
    bLatency.push(c.lastLatencyMs ?? null)
    bRetryAfter.push(c.lastRetryAfterMs ?? null)
    bFirstSent.push(c.firstSentAt === undefined ? null : new Date(c.firstSentAt).toISOString())
    for (const item of items) {
      i.batchOf.push(c.batchId)
      i.ids.push(item.id)
      i.statuses.push(item.status)
      i.reasons.push(item.doneReason)
      codes.push(item.code)
      messages.push(item.message)
      hashes.push(item.hash)
      platformIds.push(item.platformId ?? null)
    }
  }
  const r = await sql<{ id: number }>`
    with f as (
      update chatferry.batches b set
        status = 'settled', requests = b.requests + v.req, rate_limited = b.rate_limited + v.rl,
        http_status = v.hs, latency_ms = v.lat, retry_after_ms = coalesce(v.ra, b.retry_after_ms),
        error_code = null, error_message = null,
        first_sent_at = coalesce(b.first_sent_at, v.fs), settled_at = now()
      from unnest(${b.ids}::bigint[], ${b.tokens}::uuid[], ${b.requests}::int[], ${b.rateLimited}::int[], ${bStatus}::int[],
                  ${bLatency}::int[], ${bRetryAfter}::int[], ${bFirstSent}::timestamptz[]) as v(id, tok, req, rl, hs, lat, ra, fs)
      where b.id = v.id and b.lease_token = v.tok and b.lease_expires_at > now()
      returning b.id
    ),
    u as (
      update chatferry.items i set
        status = v.st, done_reason = v.dr, last_error_code = v.code, last_error_message = v.msg,
        attempts = i.attempts + 1,
        loaded_hash = case when v.st = 'done' then v.h else i.loaded_hash end,
        platform_id = coalesce(v.pid, i.platform_id),
        batch_id = case when v.st = 'planned' then null else i.batch_id end,
        updated_at = now()
      from unnest(${i.batchOf}::bigint[], ${i.ids}::bigint[], ${i.statuses}::text[], ${i.reasons}::text[],
                  ${codes}::text[], ${messages}::text[], ${hashes}::text[], ${platformIds}::text[]) as v(b, id, st, dr, code, msg, h, pid)
      join f on f.id = v.b
      where i.id = v.id and i.job_id = ${jobId} and i.batch_id = v.b and i.status = 'sent'
      returning 1
    )
    select id from f`.execute(db)
  return new Set(r.rows.map((x) => Number(x.id)))
}
