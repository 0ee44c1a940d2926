import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Drops the dry run's temporary table of thread parents (see `create-plan-parents-table.ts`), if it exists. */
export async function dropPlanParentsTable(db: Kysely<StateDatabase>): Promise<void> {
  await sql`drop table if exists chatferry_plan_parents`.execute(db)
}
