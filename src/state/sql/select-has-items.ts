import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Whether the ledger holds any item of this job (and entity, when given): one probe of the item key
 * index, where counting them scans every one.
 */
export async function selectHasItems(db: Kysely<StateDatabase>, jobId: string, entity?: string): Promise<boolean> {
  const r = await sql<{ any: boolean }>`
    select exists (select 1 from chatferry.items where job_id = ${jobId}${entity === undefined ? sql`` : sql` and entity = ${entity}`}) as any`.execute(
    db,
  )
  return r.rows[0]?.any === true
}
