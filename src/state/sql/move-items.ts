import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Moves the `sent` items with these target keys from one batch into another (a split half),
 * counting the failed attempt. Only items still in `fromBatch` move: the caller holds its lease.
 */
export async function moveItems(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: Entity; keys: readonly string[]; fromBatch: number; toBatch: number },
): Promise<void> {
  await sql`
    update chatferry.items set batch_id = ${args.toBatch}, attempts = attempts + 1, updated_at = now()
    where job_id = ${args.jobId} and entity = ${args.entity} and target_key = any(${args.keys}::text[])
      and batch_id = ${args.fromBatch} and status = 'sent'`.execute(db)
}
