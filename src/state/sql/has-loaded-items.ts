import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Whether the job holds a loaded item of this entity that a vanished-item comparison would look at
 * (done, with a legacy id, not marked vanished: `count-vanished-items.ts`'s `loaded`).
 */
export async function hasLoadedItems(db: Kysely<StateDatabase>, jobId: string, entity: string): Promise<boolean> {
  const r = await sql<{ x: number }>`
    select 1 as x from chatferry.items
    where job_id = ${jobId} and entity = ${entity} and status = 'done' and legacy_id not like '~%' and vanished_at is null
    limit 1`.execute(db)
  return r.rows.length > 0
}
