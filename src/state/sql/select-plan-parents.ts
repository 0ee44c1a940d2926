import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { PlanParentRow } from './insert-plan-parents.ts'

/** Reads the dry run's thread parents with these legacy ids from its temporary table. */
export async function selectPlanParents(db: Kysely<StateDatabase>, legacyIds: readonly string[]): Promise<PlanParentRow[]> {
  const rows = await sql<PlanParentRow>`
    select legacy_id as "legacyId", muid, text, sender_name as "senderName", skipped_policy as "skippedPolicy" from chatferry_plan_parents
    where legacy_id = any(${[...legacyIds]}::text[])`.execute(db)
  return rows.rows
}
