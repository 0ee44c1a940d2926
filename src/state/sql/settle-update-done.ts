import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The item an update belongs to, and the payload hash it brought the platform to. */
export interface SettledUpdate {
  readonly jobId: string
  readonly entity: string
  readonly targetKey: string
  readonly payloadHash: string | null
}

/**
 * Settles an update `done` (`httpStatus` null when no call was needed: the platform already had
 * the desired state), fenced by `owner`'s unexpired lease. Returns its item, or undefined when the
 * lease was lost (another process owns the update now and settles it).
 */
export async function settleUpdateDone(
  db: Kysely<StateDatabase>,
  args: { id: number; owner: string; httpStatus: number | null },
): Promise<SettledUpdate | undefined> {
  const r = await sql<{ job_id: string; entity: string; target_key: string; payload_hash: string | null }>`
    update chatferry.updates
    set status = 'done', settled_at = now(), http_status = ${args.httpStatus},
        error_code = null, error_message = null, lease_owner = null, lease_expires_at = null
    where id = ${args.id} and lease_owner = ${args.owner} and lease_expires_at > now() and status in ('planned', 'sent')
    returning job_id, entity, target_key, payload_hash`.execute(db)
  const row = r.rows[0]
  return row === undefined ? undefined : { jobId: row.job_id, entity: row.entity, targetKey: row.target_key, payloadHash: row.payload_hash }
}
