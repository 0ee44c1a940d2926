import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Withdraws acceptances (`accept-rejects --withdraw`): their items count as open rejects again. Returns the rows removed. */
export async function deleteAcceptedRejects(
  db: Kysely<StateDatabase>,
  jobId: string,
  items: readonly { entity: string; targetKey: string }[],
): Promise<number> {
  if (items.length === 0) {
    return 0
  }
  const r = await sql`
    delete from chatferry.accepted_rejects a
    using unnest(${items.map((x) => x.entity)}::text[], ${items.map((x) => x.targetKey)}::text[]) as t(entity, target_key)
    where a.job_id = ${jobId} and a.entity = t.entity and a.target_key = t.target_key`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
