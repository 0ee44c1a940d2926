import type { Kysely } from 'kysely'

import { cursorValue } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** One entity's read state as `chatferry cursors` lists it. */
export interface CursorRow {
  readonly entity: string
  /** The saved key (`{…, complete: 1}` once the read finished), as stored. */
  readonly cursor: unknown
  /** The highest change time read (epoch ms), the next delta's start; null before any. */
  readonly watermark: unknown
  readonly updatedAt: Date
}

/** Every saved cursor of the job (`chatferry.cursors`), by entity. */
export async function selectCursors(db: Kysely<StateDatabase>, jobId: string): Promise<CursorRow[]> {
  const rows = await db
    .selectFrom('chatferry.cursors')
    .select(['entity', 'cursor', 'watermark', 'updated_at'])
    .where('job_id', '=', jobId)
    .orderBy('entity')
    .execute()
  return rows.map((r) => ({
    entity: r.entity,
    cursor: cursorValue(r.cursor),
    watermark: cursorValue(r.watermark),
    updatedAt: new Date(r.updated_at),
  }))
}
