import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import { comparedLoaded } from './compared-loaded.ts'

/** The reason of every intent recorded for a vanished item (an item reported with it is not reported again). */
export const VANISHED_REASON = 'vanished from the source'

/** A done item whose legacy id the source no longer holds. */
export interface VanishedItemRow {
  readonly id: number
  readonly legacyId: string
  readonly targetKey: string
  /** The stored payload (what the platform has), JSON text. */
  readonly payload: string | null
}

/** Where a page of {@link selectVanishedItems} ends: the next page starts after it. */
export interface VanishedAfter {
  readonly legacyId: string
  readonly id: number
}

/**
 * One page of the job's done items of an entity whose legacy id is not in the temporary table
 * `chatferry_seen_keys` (the keys-only read of the source), in (legacy id, id) order after `after`.
 * Skipped: extra items (legacy ids starting with `~`: placeholders, the system user), items whose
 * removal is planned already (`vanished_at`), and items whose vanishing was reported already.
 * Reads the partial index `items_done_legacy_idx` (job_id, entity, legacy_id, id) in order and
 * probes the temporary table's primary key once per done item.
 */
export async function selectVanishedItems(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  after: VanishedAfter | undefined,
  limit: number,
): Promise<VanishedItemRow[]> {
  const r = await sql<VanishedItemRow>`
    select i.id::int8 as id, i.legacy_id as "legacyId", i.target_key as "targetKey", i.payload
    from chatferry.items i
    where ${comparedLoaded(jobId, entity)}
      and (i.legacy_id, i.id) > (${after?.legacyId ?? ''}, ${after?.id ?? 0})
      and not exists (select 1 from chatferry_seen_keys s where s.legacy_id = i.legacy_id)
      and not exists (
        select 1 from chatferry.updates u
        where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key
          and u.status = 'reported' and u.reason = ${VANISHED_REASON})
    order by i.legacy_id, i.id limit ${limit}`.execute(db)
  return r.rows.map((row) => ({ ...row, id: Number(row.id) }))
}
