import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * `chatferry verify --replan`: plans again the last done removal (a group's delete, a member's
 * kick, a message's delete) of items verify found still on the platform, so the next `chatferry
 * load` sends it through the update lane again. Only the item's newest removal changes, and only
 * when no update of the same kind is planned or in flight already. Returns how many were planned again.
 */
export async function replanDoneRemovals(
  db: Kysely<StateDatabase>,
  args: { jobId: string; entity: string; keys: readonly string[] },
): Promise<number> {
  if (args.keys.length === 0) {
    return 0
  }
  const r = await sql`
    update chatferry.updates u set status = 'planned', attempts = 0, settled_at = null, sent_at = null,
      http_status = null, error_code = null, error_message = null, lease_owner = null, lease_expires_at = null
    where u.id in (
      select distinct on (d.target_key) d.id from chatferry.updates d
      where d.job_id = ${args.jobId} and d.entity = ${args.entity} and d.target_key = any(${args.keys}::text[])
        and d.status = 'done' and d.kind in ('group.delete', 'member.kick', 'message.delete')
        and not exists (select 1 from chatferry.updates p
                        where p.job_id = d.job_id and p.entity = d.entity and p.target_key = d.target_key
                          and p.kind = d.kind and p.status in ('planned', 'sent'))
      order by d.target_key, d.id desc)`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
