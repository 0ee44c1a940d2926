import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { comparedLoaded } from './compared-loaded.ts'
import { VANISHED_REASON } from './select-vanished-items.ts'

/**
 * Of the job's loaded items of an entity that a key-set comparison looks at (done, not extra
 * items, removal not planned), how many there are and how many of them are gone from the temporary
 * table `chatferry_seen_keys` (and not reported gone already): what the comparison would find, so
 * a source that lost most of its rows (the wrong database, a query that matches nothing) can be
 * refused before anything is recorded. One pass over `items_done_legacy_idx`.
 */
export async function countVanishedItems(db: Kysely<StateDatabase>, jobId: string, entity: string): Promise<{ gone: number; loaded: number }> {
  const r = await sql<{ gone: number; loaded: number }>`
    select count(*)::int as loaded,
      (count(*) filter (where not exists (select 1 from chatferry_seen_keys s where s.legacy_id = i.legacy_id)
        and not exists (
          select 1 from chatferry.updates u
          where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key
            and u.status = 'reported' and u.reason = ${VANISHED_REASON})))::int as gone
    from chatferry.items i
    where ${comparedLoaded(jobId, entity)}`.execute(db)
  return { gone: r.rows[0]?.gone ?? 0, loaded: r.rows[0]?.loaded ?? 0 }
}
