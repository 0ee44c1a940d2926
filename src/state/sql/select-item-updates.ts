import { type Kysely, sql } from 'kysely'

import type { StateDatabase, UpdateKind, UpdateStatus } from '../schema.ts'

/** One update of an item, as verify weighs it against what the platform shows. */
export interface ItemUpdateRow {
  readonly target_key: string
  readonly kind: UpdateKind
  readonly status: UpdateStatus
}

/**
 * Reads the update intents of a job's items of one entity (`chatferry.updates`, through
 * `updates_item_idx`), oldest first: all of them, or those of `targetKeys` only (the message
 * sample). Verify derives from them what the platform should show beyond the item's payload — a
 * message edited or deleted, a user deactivated, a member kicked — and which differences a pending
 * or reported update explains.
 */
export async function selectItemUpdates(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  targetKeys?: readonly string[],
): Promise<ItemUpdateRow[]> {
  if (targetKeys !== undefined && targetKeys.length === 0) {
    return []
  }
  const keys = targetKeys === undefined ? sql`` : sql`and target_key = any(${[...targetKeys]}::text[])`
  const rows = await sql<ItemUpdateRow>`
    select target_key, kind, status from chatferry.updates
    where job_id = ${jobId} and entity = ${entity} ${keys} and status <> 'superseded'
    order by target_key, id`.execute(db)
  return rows.rows
}
