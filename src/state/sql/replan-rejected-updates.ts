import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * `chatferry retry-rejected` for updates: plans rejected updates again (all, or those of one entity
 * or error code), attempts reset; with `held: 'conflict'` the updates held back by the conflict
 * policy instead (`retry-rejected --conflicts`). One whose item has a planned update of the same
 * kind, a newer one sent or applied, or a newer one chosen, is superseded instead (the other carries
 * the newer desired state; one planned row per item and kind). Returns how many were planned again.
 */
export async function replanRejectedUpdates(
  db: Kysely<StateDatabase>,
  jobId: string,
  filter: { code?: string; entity?: string; held?: 'rejected' | 'conflict' },
): Promise<number> {
  const code = filter.code ?? null
  const entity = filter.entity ?? null
  const held = filter.held ?? 'rejected'
  const r = await sql<{ n: number | string }>`
    with chosen as (
      select r.id, r.entity, r.target_key, r.kind from chatferry.updates r
      where r.job_id = ${jobId} and r.status = ${held}
        and (${code}::text is null or r.error_code = ${code}) and (${entity}::text is null or r.entity = ${entity})
    ),
    sup as (
      update chatferry.updates s set status = 'superseded', settled_at = now()
      from chosen c
      where s.id = c.id and (
        exists (select 1 from chatferry.updates p
                where p.job_id = ${jobId} and p.entity = c.entity and p.target_key = c.target_key and p.kind = c.kind
                  and (p.status = 'planned' or (p.status in ('sent', 'done') and p.id > c.id)))
        or exists (select 1 from chosen n where n.entity = c.entity and n.target_key = c.target_key and n.kind = c.kind and n.id > c.id))
      returning s.id
    ),
    replanned as (
      update chatferry.updates u set status = 'planned', attempts = 0, settled_at = null, http_status = null,
        error_code = case when u.error_code = 'CHANGED_ON_PLATFORM' then null else u.error_code end
      from chosen c
      where u.id = c.id and c.id not in (select id from sup)
      returning u.id
    )
    select count(*)::int as n from replanned`.execute(db)
  return Number(r.rows[0]?.n ?? 0)
}
