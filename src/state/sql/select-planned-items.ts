import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'
import { heldByFiles } from './held-by-files.ts'

/** A planned item as the packer sees it. */
export interface PlannedRef {
  readonly id: number
  /** Its drain order; for a message its `sentAt` (epoch seconds), written with its payload. */
  readonly sortKey: number
}

/**
 * Up to `limit` planned items of one entity, in drain order (sort key, then id: messages
 * oldest first). Called by the packer while it holds the job lock, so no other packer takes them.
 * A message waiting for its files (one not settled yet, or failed under `files.onFailure: wait`;
 * `chatferry.file_links`) is left planned until they are.
 */
export async function selectPlannedItems(db: Kysely<StateDatabase>, jobId: string, entity: Entity, limit: number): Promise<PlannedRef[]> {
  const rows = await sql<{ id: number | string; sort_key: number | string }>`
    select id, sort_key from chatferry.items i
    where job_id = ${jobId} and entity = ${entity} and status = 'planned'
      and not exists (${heldByFiles()})
    order by sort_key, id limit ${limit}`.execute(db)
  return rows.rows.map((r) => ({ id: Number(r.id), sortKey: Number(r.sort_key) }))
}
