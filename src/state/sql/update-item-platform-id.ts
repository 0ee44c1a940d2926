import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Records the platform's id of a loaded item (`items.platform_id`) that the update lane found on
 * the platform (a message loaded before the loader recorded ids), so the next update needs no search.
 */
export async function updateItemPlatformId(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: string; targetKey: string; platformId: string },
): Promise<void> {
  await sql`
    update chatferry.items set platform_id = ${args.platformId}, updated_at = now()
    where job_id = ${args.jobId} and entity = ${args.entity} and target_key = ${args.targetKey}
      and platform_id is distinct from ${args.platformId}`.execute(db)
}
