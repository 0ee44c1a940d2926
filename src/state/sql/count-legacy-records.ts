import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Counts the distinct legacy records a job's ledger accounts for, per entity (`chatferry.items`,
 * any status; extra items such as placeholders, whose legacy ids start with `~`, excluded): what
 * verify compares with the source's row counts.
 */
export async function countLegacyRecords(db: Kysely<StateDatabase>, jobId: string): Promise<{ entity: string; n: number }[]> {
  const records = await sql<{ entity: string; n: number }>`
    select entity, count(distinct legacy_id)::int as n from chatferry.items
    where job_id = ${jobId} and legacy_id not like '~%' group by 1`.execute(db)
  return records.rows
}
