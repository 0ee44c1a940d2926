import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Puts items into their batches and marks them `sent`, in one statement (`itemIds[i]` goes into
 * `batchIds[i]`). This happens in the packing transaction, before any request goes out, so a crash
 * after the request leaves the items findable by their batch.
 */
export async function assignItems(db: Kysely<StateDatabase>, itemIds: readonly number[], batchIds: readonly number[]): Promise<void> {
  await sql`
    update chatferry.items i set status = 'sent', batch_id = v.b, updated_at = now()
    from unnest(${itemIds}::bigint[], ${batchIds}::bigint[]) as v(id, b) where i.id = v.id`.execute(db)
}
