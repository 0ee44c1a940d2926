import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { comparedLoaded } from './compared-loaded.ts'

/** Whether the job holds a loaded item of this entity that a vanished-item comparison would look at ({@link comparedLoaded}). */
export async function hasLoadedItems(db: Kysely<StateDatabase>, jobId: string, entity: string): Promise<boolean> {
  const r = await sql<{ x: number }>`select 1 as x from chatferry.items i where ${comparedLoaded(jobId, entity)} limit 1`.execute(db)
  return r.rows.length > 0
}
