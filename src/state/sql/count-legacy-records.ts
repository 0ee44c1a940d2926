import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { VANISHED_REASON } from './select-vanished-items.ts'

/**
 * Counts the source rows a job's ledger accounts for, per entity (`chatferry.items`, any status;
 * extra items such as placeholders, whose legacy ids start with `~`, excluded): what verify
 * compares with the source's row counts. A legacy id counts once however many items it became,
 * and every row the plan rejected as one copy of a repeated id (its key `~legacy:<id>#<instance>`,
 * e.g. `#duplicate-2`) counts once more: those rows were read and accounted for, not missed.
 * Items whose row vanished from the source and whose removal the platform confirmed —
 * `vanished_at` and a done update of that reason: a kicked member, a deleted message — are not
 * counted: the ledger knows the source no longer has them, and neither has the platform. A removal
 * only planned or reported still counts: the platform has the item.
 */
export async function countLegacyRecords(db: Kysely<StateDatabase>, jobId: string): Promise<{ entity: string; n: number }[]> {
  const records = await sql<{ entity: string; n: number }>`
    with i as (
      select entity, legacy_id,
        (target_key like '~legacy:%#%' and target_key not like '~legacy:%#duplicate-of:%') as copy
      from chatferry.items it where job_id = ${jobId} and legacy_id not like '~%'
        and not (vanished_at is not null and exists (
          select 1 from chatferry.updates u where u.job_id = it.job_id and u.entity = it.entity and u.target_key = it.target_key
            and u.reason = ${VANISHED_REASON} and u.status = 'done'))
    )
    select entity, (count(distinct legacy_id) filter (where not copy) + count(*) filter (where copy))::int as n
    from i group by 1`.execute(db)
  return records.rows
}
