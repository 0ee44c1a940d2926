import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Inserts one open batch per entry of `sizes` (its item count), in one statement, and returns
 * their ids ascending: the batches come out in the order of the items they will hold.
 */
export async function insertBatches(db: Kysely<StateDatabase>, jobId: string, entity: Entity, sizes: readonly number[]): Promise<number[]> {
  const inserted = await sql<{ id: number }>`
    insert into chatferry.batches (job_id, entity, item_count)
    select ${jobId}, ${entity}, s from unnest(${sizes}::int[]) with ordinality as t(s, o) order by o
    returning id`.execute(db)
  return inserted.rows.map((r) => Number(r.id)).sort((a, b) => a - b)
}
