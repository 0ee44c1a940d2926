import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Marks an item "loaded unchanged" once the platform holds its payload `hash`: `loaded_hash = hash`,
 * but only when every update of the item that brings it to that hash is `done` (or superseded):
 * none planned, in flight, rejected or merely reported. Returns whether the item was updated.
 */
export async function updateLoadedHash(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: string; targetKey: string; hash: string },
): Promise<boolean> {
  const r = await sql`
    update chatferry.items i
    set loaded_hash = ${args.hash}, updated_at = now()
    where i.job_id = ${args.jobId} and i.entity = ${args.entity} and i.target_key = ${args.targetKey}
      and i.loaded_hash is distinct from ${args.hash}
      and not exists (
        select 1 from chatferry.updates u
        where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key
          and u.payload_hash = ${args.hash} and u.status not in ('done', 'superseded'))`.execute(db)
  return Number(r.numAffectedRows ?? 0) > 0
}
