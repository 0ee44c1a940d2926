import { type Kysely, sql } from 'kysely'

import { storableKey } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/**
 * Marks done items whose legacy row vanished and whose removal is planned on the platform
 * (`items.vanished_at = now()`), in the transaction that records the removal: a later read that
 * finds the row again compares it with "not on the platform" (re-add), and the next comparison
 * does not plan the removal twice.
 */
export async function updateItemsVanished(db: Kysely<StateDatabase>, jobId: string, entity: string, targetKeys: readonly string[]): Promise<void> {
  if (targetKeys.length === 0) {
    return
  }
  await sql`update chatferry.items set vanished_at = now(), updated_at = now()
    where job_id = ${jobId} and entity = ${entity} and status = 'done'
      and target_key = any(${targetKeys.map((k) => storableKey(k))}::text[])`.execute(db)
}
