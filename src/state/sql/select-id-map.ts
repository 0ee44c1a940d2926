import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** One row of `chatferry.id_map`: a legacy id and the platform id decided for it. */
export interface IdMapRow {
  /** `user` or `group` (the id policy's kinds). */
  readonly kind: string
  readonly legacyId: string
  readonly platformId: string
}

/**
 * Reads a job's whole id map (`chatferry.id_map`) in decision order (`created_at`), so a planner
 * replays earlier decisions (renames, collision suffixes) before it makes new ones.
 */
export async function selectIdMap(db: Kysely<StateDatabase>, jobId: string): Promise<IdMapRow[]> {
  const rows = await db
    .selectFrom('chatferry.id_map')
    .select(['kind', 'legacy_id', 'platform_id'])
    .where('job_id', '=', jobId)
    .orderBy('created_at')
    .execute()
  return rows.map((r) => ({ kind: r.kind, legacyId: r.legacy_id, platformId: r.platform_id }))
}
