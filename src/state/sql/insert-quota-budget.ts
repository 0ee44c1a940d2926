import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Creates the app's quota budget row when missing (every process of every job of the app shares it). */
export async function insertQuotaBudget(db: Kysely<StateDatabase>, appId: string): Promise<void> {
  await sql`insert into chatferry.quota_budgets (app_id) values (${appId}) on conflict do nothing`.execute(db)
}
