import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Hands an update back for a later try, fenced by `owner`'s lease, recording the error and counting
 * the attempt. When its call may have reached the platform (`ambiguous`: a timeout, a 5xx, a lost
 * connection after `sent`), it stays `sent` with its lease ended, so whoever takes it next checks the
 * platform's state before sending again; otherwise it goes back to `planned`. `countAttempt` false:
 * nothing was tried (the lane stopped before the call). False when the lease was lost.
 */
export async function releaseUpdate(
  db: Kysely<StateDatabase>,
  args: {
    id: number
    owner: string
    ambiguous: boolean
    countAttempt: boolean
    code: string | null
    message: string | null
    httpStatus: number | null
  },
): Promise<boolean> {
  const r = await sql`
    update chatferry.updates
    set status = case when ${args.ambiguous} then 'sent' else 'planned' end,
        attempts = attempts + ${args.countAttempt ? 1 : 0},
        error_code = coalesce(${args.code}, error_code), error_message = coalesce(${args.message}, error_message),
        http_status = coalesce(${args.httpStatus}, http_status),
        lease_owner = null, lease_expires_at = case when ${args.ambiguous} then now() else null end
    where id = ${args.id} and lease_owner = ${args.owner} and lease_expires_at > now() and status in ('planned', 'sent')`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}
