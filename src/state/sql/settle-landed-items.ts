import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Settles as `done/created` the rows of a failed message request that reading the batch back found
 * on the platform (src/load/isolate-rows.ts), with the hash sent and the platform's id. Only rows
 * still `sent` in `fromBatch` change: the caller holds its lease.
 */
export async function settleLandedItems(
  db: Kysely<StateDatabase>,
  args: { jobId: string; fromBatch: number; items: readonly { id: number; hash: string | null; platformId: string | null }[] },
): Promise<void> {
  if (args.items.length === 0) {
    return
  }
  const ids = args.items.map((i) => i.id)
  const hashes = args.items.map((i) => i.hash)
  const pids = args.items.map((i) => i.platformId)
  await sql`
    update chatferry.items i set
      status = 'done', done_reason = 'created', last_error_code = null, last_error_message = null,
      attempts = i.attempts + 1, loaded_hash = v.h, platform_id = coalesce(v.pid, i.platform_id), updated_at = now()
    from unnest(${ids}::bigint[], ${hashes}::text[], ${pids}::text[]) as v(id, h, pid)
    where i.id = v.id and i.job_id = ${args.jobId} and i.batch_id = ${args.fromBatch} and i.status = 'sent'`.execute(db)
}
