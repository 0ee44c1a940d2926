import { type Kysely, sql } from 'kysely'

import type { Entity } from '../../target/schemas.ts'
import { cursorJson } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Saves where extraction of an entity stands (`chatferry.cursors`): the cursor, and the watermark
 * when one is given (a missing watermark keeps the saved one). Written in the transaction of its
 * page by `planPage`, so a cursor never runs ahead of the ledger.
 */
export async function upsertCursor(db: Kysely<StateDatabase>, jobId: string, entity: Entity, cursor: unknown, watermark: unknown): Promise<void> {
  const c = cursor === undefined ? null : cursorJson(cursor)
  const w = watermark === undefined ? null : cursorJson(watermark)
  await sql`
    insert into chatferry.cursors (job_id, entity, cursor, watermark, updated_at)
    values (${jobId}, ${entity}, ${c}::jsonb, ${w}::jsonb, now())
    on conflict (job_id, entity) do update set cursor = excluded.cursor,
      watermark = coalesce(excluded.watermark, chatferry.cursors.watermark), updated_at = now()`.execute(db)
}
