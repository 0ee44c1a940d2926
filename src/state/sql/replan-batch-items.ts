import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Plans again the `sent` rows with these target keys of one batch (rows a failed request did not
 * write and that are not suspected of failing it: src/load/isolate-rows.ts), counting the attempt;
 * the packer puts them into the next batches. Only rows still in `fromBatch` change: the caller
 * holds its lease.
 */
export async function replanBatchItems(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: Entity; keys: readonly string[]; fromBatch: number },
): Promise<void> {
  if (args.keys.length === 0) {
    return
  }
  await sql`
    update chatferry.items set status = 'planned', batch_id = null, attempts = attempts + 1, updated_at = now()
    where job_id = ${args.jobId} and entity = ${args.entity} and target_key = any(${args.keys}::text[])
      and batch_id = ${args.fromBatch} and status = 'sent'`.execute(db)
}
