import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Abandons batches (they lost their work-queue job) and plans their `sent` items again, so the
 * packer puts them into new batches. The caller holds the batch rows locked.
 */
export async function abandonBatches(db: Kysely<StateDatabase>, batchIds: readonly number[]): Promise<void> {
  await sql`update chatferry.items set status = 'planned', batch_id = null, updated_at = now()
            where batch_id = any(${batchIds}::bigint[]) and status = 'sent'`.execute(db)
  await sql`update chatferry.batches set status = 'abandoned', settled_at = now() where id = any(${batchIds}::bigint[])`.execute(db)
}
