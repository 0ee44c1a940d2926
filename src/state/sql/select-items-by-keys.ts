import { type Kysely, sql } from 'kysely'

import { storableKey } from '../safe-text.ts'
import type { ItemStatus, StateDatabase } from '../schema.ts'

/** An item found by its target key, as the orphaned parts of a message are judged (`orphaned-parts.ts`). */
export interface KeyedItemRow {
  readonly legacyId: string
  readonly targetKey: string
  readonly status: ItemStatus
  /** The stored payload (what the platform has, for a done item). */
  readonly payload: string | null
  /** A done item whose removal is planned already. */
  readonly vanished: boolean
}

/**
 * The job's items of an entity with these target keys (absent keys are not returned), locked for
 * the caller's planning transaction. Reads the `(job_id, entity, target_key)` unique index: the
 * keys are a few candidates per changed record, never a scan.
 */
export async function selectItemsByKeys(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  targetKeys: readonly string[],
): Promise<KeyedItemRow[]> {
  if (targetKeys.length === 0) {
    return []
  }
  const r = await sql<KeyedItemRow>`
    select legacy_id as "legacyId", target_key as "targetKey", status, payload, vanished_at is not null as vanished
    from chatferry.items
    where job_id = ${jobId} and entity = ${entity} and target_key = any(${targetKeys.map((k) => storableKey(k))}::text[])
    order by id
    for update`.execute(db)
  return r.rows
}
