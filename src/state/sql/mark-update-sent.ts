import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Records that the update's call is about to go out: `sent`, with a fresh lease of `leaseSeconds`
 * (it must outlast the request), **before** the request, and only while `owner` still holds an
 * unexpired lease (fencing). False when the lease was lost: the caller must not send.
 */
export async function markUpdateSent(db: Kysely<StateDatabase>, args: { id: number; owner: string; leaseSeconds: number }): Promise<boolean> {
  const r = await sql`
    update chatferry.updates
    set status = 'sent', sent_at = now(), lease_expires_at = now() + ${args.leaseSeconds} * interval '1 second'
    where id = ${args.id} and lease_owner = ${args.owner} and lease_expires_at > now() and status in ('planned', 'sent')`.execute(db)
  return Number(r.numAffectedRows ?? 0) === 1
}
