import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Pauses the app's budget for `ms` from now (database clock): no process reserves a slot before
 * then. A pause never shortens an earlier, longer one (`greatest`).
 */
export async function pauseQuotaBudget(db: Kysely<StateDatabase>, appId: string, ms: number): Promise<void> {
  await sql`
    update chatferry.quota_budgets
    set paused_until_ms = greatest(paused_until_ms, extract(epoch from clock_timestamp()) * 1000 + ${ms}::float8),
        pauses = pauses + 1, updated_at = now()
    where app_id = ${appId}`.execute(db)
}
