import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

export interface Acceptance {
  readonly reason: string
  readonly by: string
}

/**
 * Records the acceptance of rejected items (`chatferry.accepted_rejects`), each with the code and
 * message its reject has now, and who accepted it, when and why. An acceptance that lapsed (the
 * item was rejected again for another code) is replaced. Returns the rows written.
 */
export async function upsertAcceptedRejects(
  db: Kysely<StateDatabase>,
  jobId: string,
  items: readonly { entity: string; targetKey: string }[],
  acceptance: Acceptance,
): Promise<number> {
  if (items.length === 0) {
    return 0
  }
  const r = await sql`
    insert into chatferry.accepted_rejects as a (job_id, entity, target_key, legacy_id, code, message, reason, accepted_by)
    select i.job_id, i.entity, i.target_key, i.legacy_id, i.last_error_code, i.last_error_message, ${acceptance.reason}, ${acceptance.by}
    from chatferry.items i
    join unnest(${items.map((x) => x.entity)}::text[], ${items.map((x) => x.targetKey)}::text[]) as t(entity, target_key)
      on i.entity = t.entity and i.target_key = t.target_key
    where i.job_id = ${jobId} and i.status = 'rejected'
    on conflict (job_id, entity, target_key) do update set
      legacy_id = excluded.legacy_id, code = excluded.code, message = excluded.message, reason = excluded.reason,
      accepted_by = excluded.accepted_by, accepted_at = now()`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
