import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Extends the leases `owner` still holds on these files (a long download or upload); returns the ids renewed. */
export async function renewFileLeases(
  db: Kysely<StateDatabase>,
  args: { owner: string; files: readonly { id: number; fence: number }[]; leaseSeconds: number },
): Promise<number[]> {
  if (args.files.length === 0) {
    return []
  }
  const r = await sql<{ id: string | number }>`
    update chatferry.files f set lease_until = now() + ${args.leaseSeconds} * interval '1 second'
    from unnest(${args.files.map((f) => f.id)}::bigint[], ${args.files.map((f) => f.fence)}::bigint[]) as v(id, fence)
    where f.id = v.id and f.fence = v.fence and f.lease_owner = ${args.owner} and f.state = 'planned' and f.lease_until > now()
    returning f.id`.execute(db)
  return r.rows.map((row) => Number(row.id))
}
