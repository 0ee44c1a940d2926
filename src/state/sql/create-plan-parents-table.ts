import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Creates (or empties) the dry run's temporary table of thread parents, `chatferry_plan_parents`,
 * on the connection `db` is bound to. Temporary: it lives and dies with that connection and never
 * touches the ledger's own tables. Its key compares bytes (collation "C"): legacy ids are only
 * matched, never sorted for people, and a locale's comparison costs several times more on every
 * insert and lookup.
 */
export async function createPlanParentsTable(db: Kysely<StateDatabase>): Promise<void> {
  await sql`create temporary table if not exists chatferry_plan_parents (
    legacy_id text collate "C" primary key, muid text, text text, sender_name text, skipped_policy text) on commit preserve rows`.execute(db)
  await sql`truncate chatferry_plan_parents`.execute(db)
}
