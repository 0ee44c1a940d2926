import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Counts the source rows a job's ledger accounts for, per entity (`chatferry.items`, any status;
 * extra items such as placeholders, whose legacy ids start with `~`, excluded): what verify
 * compares with the source's row counts. A legacy id counts once however many items it became,
 * and every row the plan rejected as one copy of a repeated id (its key `~legacy:<id>#<instance>`,
 * e.g. `#duplicate-2`) counts once more: those rows were read and accounted for, not missed.
 */
export async function countLegacyRecords(db: Kysely<StateDatabase>, jobId: string): Promise<{ entity: string; n: number }[]> {
  const records = await sql<{ entity: string; n: number }>`
    with i as (
      select entity, legacy_id,
        (target_key like '~legacy:%#%' and target_key not like '~legacy:%#duplicate-of:%') as copy
      from chatferry.items where job_id = ${jobId} and legacy_id not like '~%'
    )
    select entity, (count(distinct legacy_id) filter (where not copy) + count(*) filter (where copy))::int as n
    from i group by 1`.execute(db)
  return records.rows
}
