import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

/** Inserts one half of a split batch (open, pointing at its parent) and returns its id. */
export async function insertSplitBatch(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: Entity; itemCount: number; parentId: number },
): Promise<number> {
  const b = await sql<{ id: number }>`
    insert into chatferry.batches (job_id, entity, item_count, parent_id)
    values (${args.jobId}, ${args.entity}, ${args.itemCount}, ${args.parentId}) returning id`.execute(db)
  return Number(b.rows[0]?.id)
}
