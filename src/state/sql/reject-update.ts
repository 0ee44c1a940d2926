import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Rejects an update the platform refused (a 4xx with its code, or `MESSAGE_NOT_ON_PLATFORM` when
 * the lane cannot find the message), with the code, the reason and the HTTP status, fenced by
 * `owner`'s unexpired lease. `as: 'reported'` settles a change the platform cannot take (kept with
 * its reason, never sent again, not a failure of the run); `conflict` / `dropped` one the conflict
 * policy holds back (its item changed on the platform). False when the lease was lost.
 */
export async function rejectUpdate(
  db: Kysely<StateDatabase>,
  args: {
    id: number
    owner: string
    code: string
    message: string
    httpStatus: number | null
    as?: 'rejected' | 'reported' | 'conflict' | 'dropped'
  },
): Promise<boolean> {
  const r = await sql`
    update chatferry.updates
    set status = ${args.as ?? 'rejected'}, settled_at = now(), http_status = ${args.httpStatus},
        error_code = ${args.code}, error_message = ${args.message}, lease_owner = null, lease_expires_at = null
    where id = ${args.id} and lease_owner = ${args.owner} and lease_expires_at > now() and status in ('planned', 'sent')`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}
