import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Forgets where the reads of these entities stand (`chatferry cursors reset`, `run --reread`): the
 * next full run reads each from its first row and sets a new watermark. Items, their payloads and
 * their loaded state stay: the read compares every row with them (changes go through the update
 * lane). Returns the entities whose cursor was deleted.
 */
export async function deleteCursors(db: Kysely<StateDatabase>, jobId: string, entities: readonly string[]): Promise<string[]> {
  if (entities.length === 0) {
    return []
  }
  const rows = await db
    .deleteFrom('chatferry.cursors')
    .where('job_id', '=', jobId)
    .where('entity', 'in', [...entities])
    .returning('entity')
    .execute()
  return rows.map((r) => r.entity)
}
