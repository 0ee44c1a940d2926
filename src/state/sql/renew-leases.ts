import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Renews the leases of batches still held under these tokens: `leaseSeconds` from now, **fenced**
 * like a settle (the token still matches and the lease has not expired: a lapsed lease is not
 * revived, another worker may hold the batch by now). Returns the ids renewed.
 */
export async function renewLeases(
  db: Kysely<StateDatabase>,
  leases: readonly { batchId: number; token: string }[],
  leaseSeconds: number,
): Promise<number[]> {
  const r = await sql<{ id: number | string }>`
    update chatferry.batches b
    set lease_expires_at = now() + ${leaseSeconds} * interval '1 second'
    from unnest(${leases.map((l) => l.batchId)}::bigint[], ${leases.map((l) => l.token)}::uuid[]) as v(id, tok)
    where b.id = v.id and b.lease_token = v.tok and b.status = 'open' and b.lease_expires_at > now()
    returning b.id`.execute(db)
  return r.rows.map((row) => Number(row.id))
}
