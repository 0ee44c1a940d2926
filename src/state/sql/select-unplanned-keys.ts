import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * The legacy ids in the temporary table `chatferry_seen_keys` (a keys-only read of the source) that
 * the ledger holds no item of `entity` for, in any status (planned, sent, done, skipped, rejected):
 * rows the ledger never planned — a late row below the delta's watermark, a row of a table without
 * a change-time column. The temporary table is analyzed first, so Postgres plans the anti-join with
 * its real size (a hash anti-join over the job's items of the entity, found through the items'
 * unique key `(job_id, entity, target_key)`), never a nested loop over a table it thinks empty.
 */
export async function selectUnplannedKeys(db: Kysely<StateDatabase>, jobId: string, entity: string): Promise<string[]> {
  await sql`analyze chatferry_seen_keys`.execute(db)
  const r = await sql<{ legacy_id: string }>`
    select s.legacy_id from chatferry_seen_keys s
    where not exists (
      select 1 from chatferry.items i where i.job_id = ${jobId} and i.entity = ${entity} and i.legacy_id = s.legacy_id)
    order by s.legacy_id`.execute(db)
  return r.rows.map((row) => row.legacy_id)
}
