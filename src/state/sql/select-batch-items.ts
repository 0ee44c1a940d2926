import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

export interface BatchItemRow {
  readonly batchId: number
  /** The ledger row id. */
  readonly id: number
  readonly key: string
  /** The import item's JSON text, sent as is. */
  readonly payload: string
  readonly hash: string | null
}

/** The items still `sent` in these batches, in send order (batch, sort key, id). */
export async function selectBatchItems(db: Kysely<StateDatabase>, batchIds: readonly number[]): Promise<BatchItemRow[]> {
  const items = await sql<{ id: number; batch_id: number; target_key: string; payload: string; payload_hash: string | null }>`
    select id, batch_id, target_key, payload, payload_hash from chatferry.items
    where batch_id = any(${batchIds}::bigint[]) and status = 'sent' order by batch_id, sort_key, id`.execute(db)
  return items.rows.map((i) => ({ batchId: Number(i.batch_id), id: Number(i.id), key: i.target_key, payload: i.payload, hash: i.payload_hash }))
}
