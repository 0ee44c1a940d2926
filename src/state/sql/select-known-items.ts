import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What the ledger holds for a target key the dry run is about to classify. */
export interface KnownItemRow {
  readonly target_key: string
  readonly status: string
  readonly payload_hash: string | null
  readonly loaded_hash: string | null
  /**
   * The stored payload, only when the item is done, planned or sent and its hash differs from the
   * new one, to name the changed fields (for a done item: what the platform has or will have once
   * its planned updates are sent, which its changes are compared with).
   */
  readonly payload: string | null
  /** A done item whose removal from the platform was planned (`vanished_at`). */
  readonly vanished: boolean
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
    select i.target_key, i.status, i.payload_hash, i.loaded_hash, i.vanished_at is not null as vanished,
      case when i.status in ('done', 'planned', 'sent') and (i.payload_hash is distinct from t.h or i.vanished_at is not null)
      then i.payload end as payload
    from unnest(${[...keys]}::text[], ${[...hashes]}::text[]) as t(k, h)
    join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = t.k`.execute(db)
  return old.rows
}
