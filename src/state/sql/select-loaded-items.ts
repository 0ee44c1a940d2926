import { type Kysely, sql } from 'kysely'

import { storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** A loaded item of a legacy record, as a change is compared with it. */
export interface LoadedItemRow {
  readonly legacyId: string
  readonly targetKey: string
  /** The stored payload: what the platform has (or will have once its planned updates are sent). */
  readonly payload: string | null
}

/**
 * The job's done items of an entity with these legacy ids whose removal is not planned yet
 * (`vanished_at` null), locked for the caller's transaction: the loaded items of records a policy
 * now skips (a message deleted in the source, a user deactivated under `deactivatedUsers: skip`).
 * Reads `items_done_legacy_idx`. `lock`: `for update` (planning); the dry run reads without.
 */
export async function selectLoadedItems(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  legacyIds: readonly string[],
  lock: boolean,
): Promise<LoadedItemRow[]> {
  if (legacyIds.length === 0) {
    return []
  }
  const r = await sql<LoadedItemRow>`
    select legacy_id as "legacyId", target_key as "targetKey", payload from chatferry.items
    where job_id = ${jobId} and entity = ${entity} and status = 'done' and vanished_at is null
      and legacy_id = any(${legacyIds.map((id) => storableText(id))}::text[])
    order by legacy_id, id
    ${lock ? sql`for update` : sql``}`.execute(db)
  return r.rows
}
