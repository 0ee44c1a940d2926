import { type Kysely, sql } from 'kysely'

import { storableKey } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** An item changed on the platform after chatferry last wrote it. */
export interface PlatformConflictRow {
  readonly targetKey: string
  readonly legacyId: string
  /** The newest such change: its trigger and when the receiver stored it. */
  readonly trigger: string
  readonly receivedAt: Date
}

/**
 * Which of these done items of `entity` were changed on the platform after chatferry last wrote
 * them: a `platform`-origin event of the item (messages by `items.platform_id`, others by their
 * lowercase target key) received after the item's import was settled (its batch's `settled_at`)
 * and after the last update chatferry applied to it (`sent_at` of a `done` update: an update applied
 * later overwrote the platform's change, knowingly under `source-wins`). Reads
 * `platform_events_item_idx` per item.
 */
export async function selectPlatformConflicts(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  targetKeys: readonly string[],
): Promise<PlatformConflictRow[]> {
  if (targetKeys.length === 0 || !['groups', 'members', 'messages'].includes(entity)) {
    return []
  }
  const r = await sql<{ target_key: string; legacy_id: string; trigger: string; received_at: Date }>`
    select i.target_key, i.legacy_id, e.trigger, e.received_at
    from unnest(${targetKeys.map(storableKey)}::text[]) as k(key)
    join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.target_key = k.key and i.status = 'done'
    left join chatferry.batches b on b.id = i.batch_id
    cross join lateral (
      select e.trigger, e.received_at from chatferry.platform_events e
      where e.job_id = i.job_id and e.entity = i.entity and e.origin = 'platform'
        and e.platform_key = case when i.entity = 'messages' then i.platform_id else lower(i.target_key) end
        and e.received_at > coalesce(b.settled_at, i.created_at)
        and not exists (
          select 1 from chatferry.updates u
          where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key
            and u.status = 'done' and u.sent_at > e.received_at)
      order by e.received_at desc limit 1) e`.execute(db)
  return r.rows.map((row) => ({ targetKey: row.target_key, legacyId: row.legacy_id, trigger: row.trigger, receivedAt: new Date(row.received_at) }))
}
