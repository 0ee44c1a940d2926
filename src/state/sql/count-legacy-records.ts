import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { VANISHED_REASON } from './select-vanished-items.ts'

/**
 * Counts the distinct legacy records a job's ledger accounts for, per entity (`chatferry.items`,
 * any status; extra items such as placeholders, whose legacy ids start with `~`, excluded; items
 * whose row vanished from the source and whose removal the platform confirmed — `vanished_at` and a
 * done update of that reason: a kicked member, a deleted message — excluded too: the ledger knows
 * the source no longer has them, and neither has the platform): what verify compares with the
 * source's row counts. A removal only planned or reported still counts: the platform has the item.
 */
export async function countLegacyRecords(db: Kysely<StateDatabase>, jobId: string): Promise<{ entity: string; n: number }[]> {
  const records = await sql<{ entity: string; n: number }>`
    select entity, count(distinct legacy_id)::int as n from chatferry.items i
    where job_id = ${jobId} and legacy_id not like '~%'
      and not (vanished_at is not null and exists (
        select 1 from chatferry.updates u where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key
          and u.reason = ${VANISHED_REASON} and u.status = 'done'))
    group by 1`.execute(db)
  return records.rows
}
