import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What chatferry wrote to one item: its stored payload and the updates it sent. */
export interface OwnWritesRow {
  readonly platformKey: string
  readonly targetKey: string
  /** The stored payload of the done item (what chatferry loaded or last planned); null when its removal was planned. */
  readonly payload: string | null
  /** The item's updates chatferry sent (`sent` or `done`), newest first: kind and body (JSON text). */
  readonly updates: readonly { kind: string; body: string }[]
}

/**
 * The done items of `entity` that `platformKeys` name — messages by `items.platform_id`
 * (`items_platform_id_idx`), groups and members by their lowercase target key — with their stored
 * payload and the last 20 updates chatferry sent to each (`updates_item_idx`): what the receiver
 * compares a delivery with to tell chatferry's own writes (their echo) from changes made by
 * someone on the platform.
 */
export async function selectOwnWrites(
  db: Kysely<StateDatabase>,
  jobId: string,
  entity: string,
  platformKeys: readonly string[],
): Promise<OwnWritesRow[]> {
  if (platformKeys.length === 0) {
    return []
  }
  const byPlatformId = entity === 'messages'
  const r = await sql<{ platform_key: string; target_key: string; payload: string | null; updates: { kind: string; body: string }[] | null }>`
    select k.key as platform_key, i.target_key, case when i.vanished_at is null then i.payload end as payload,
      (select json_agg(json_build_object('kind', u.kind, 'body', u.body) order by u.id desc)
       from (select u.id, u.kind, u.body from chatferry.updates u
             where u.job_id = i.job_id and u.entity = i.entity and u.target_key = i.target_key and u.status in ('sent', 'done')
             order by u.id desc limit 20) u) as updates
    from unnest(${[...platformKeys]}::text[]) as k(key)
    join chatferry.items i on i.job_id = ${jobId} and i.entity = ${entity} and i.status = 'done'
      and ${byPlatformId ? sql`i.platform_id = k.key` : sql`i.target_key = k.key`}`.execute(db)
  return r.rows.map((row) => ({ platformKey: row.platform_key, targetKey: row.target_key, payload: row.payload, updates: row.updates ?? [] }))
}
