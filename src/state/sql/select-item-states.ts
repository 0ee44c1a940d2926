import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** An item's key, legacy id and fate, as verify compares it with the platform's lists. */
export interface ItemStateRow {
  readonly entity: 'users' | 'groups' | 'members'
  readonly target_key: string
  readonly legacy_id: string
  readonly status: string
  /** The payload changed after the platform accepted it (`loaded_hash` ≠ `payload_hash`). */
  readonly changed: boolean
  /** The item's current payload (JSON text; null for an item without one): what verify compares field by field. */
  readonly payload: string | null
}

/**
 * Reads every user, group and member item of a job (`chatferry.items`, any status) with its payload,
 * so verify can compare the platform's users, groups and members id by id with the ones the ledger
 * marks done, and field by field with their payloads.
 */
export async function selectItemStates(db: Kysely<StateDatabase>, jobId: string): Promise<ItemStateRow[]> {
  const rows = await sql<ItemStateRow>`
    select entity, target_key, legacy_id, status, (loaded_hash is distinct from payload_hash) as changed, payload
    from chatferry.items where job_id = ${jobId} and entity in ('users', 'groups', 'members')`.execute(db)
  return rows.rows
}
