import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A done message as it was sent, for a field-by-field comparison with the platform. */
export interface MessageSampleRow {
  readonly target_key: string
  readonly legacy_id: string
  /** The payload's JSON text. */
  readonly payload: string
  /** The payload changed after the platform accepted it. */
  readonly changed: boolean
}

/**
 * Reads up to `size` done message items of a job (`chatferry.items`), picked deterministically
 * (ordered by `md5(target_key)`), so two verifies of the same ledger compare the same sample.
 */
export async function selectMessageSample(db: Kysely<StateDatabase>, jobId: string, size: number): Promise<MessageSampleRow[]> {
  const picked = await sql<MessageSampleRow>`
    select target_key, legacy_id, payload, (loaded_hash is distinct from payload_hash) as changed from chatferry.items
    where job_id = ${jobId} and entity = 'messages' and status = 'done' order by md5(target_key) limit ${size}`.execute(db)
  return picked.rows
}
