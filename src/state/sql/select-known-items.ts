import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What the ledger holds for a target key the dry run is about to classify. */
export interface KnownItemRow {
  readonly target_key: string
  readonly status: string
  readonly payload_hash: string | null
  readonly loaded_hash: string | null
  /**
   * The stored payload, only when the item is done, planned or sent and its hash (for a done
   * item: the hash the platform accepted) differs from the new one, to name the changed fields.
   */
  readonly payload: string | null
}

/**
 * Reads the ledger's items (`chatferry.items`) for these target keys of one entity, each paired
 * with the hash of its new payload (`keys[i]` ↔ `hashes[i]`). Keys the ledger has never seen are
 * absent from the result.
 */
export async function selectKnownItems(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  keys: readonly string[],
  hashes: readonly string[],
): Promise<KnownItemRow[]> {
  // The stored payload travels only for items that changed (to name the fields that did).
  const old = await sql<KnownItemRow>`
    select i.target_key, i.status, i.payload_hash, i.loaded_hash,
      case when i.status in ('done', 'planned', 'sent')
        and (case when i.status = 'done' then coalesce(i.loaded_hash, i.payload_hash) else i.payload_hash end) is distinct from t.h
      then i.payload end as payload
    from unnest(${[...keys]}::text[], ${[...hashes]}::text[]) as t(k, h)
    join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k`.execute(db)
  return old.rows
}
