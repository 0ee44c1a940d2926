import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * `chatferry verify --replan`: plans again items of one entity whose ledger status the platform
 * contradicts — done items verify found absent (the next `chatferry load` imports them again) and
 * rejected items verify found present (the next load sends them, the platform answers "already
 * exists", and they are done). Target keys are deterministic, so neither can make a second copy.
 * The platform id a message had is forgotten (the new import names it). Only items with a payload
 * can be sent. Returns how many were planned again.
 */
export async function replanItems(db: Kysely<StateDatabase>, args: { jobId: string; entity: string; keys: readonly string[] }): Promise<number> {
  if (args.keys.length === 0) {
    return 0
  }
  const r = await sql`
    update chatferry.items set status = 'planned', done_reason = null, last_error_code = null, last_error_message = null, attempts = 0, batch_id = null,
      platform_id = null, updated_at = now()
    where job_id = ${args.jobId} and entity = ${args.entity} and target_key = any(${args.keys}::text[])
      and status in ('done', 'rejected') and payload is not null`.execute(db)
  return Number(r.numAffectedRows ?? 0)
}
