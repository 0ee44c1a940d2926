import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'
import type { UnitKind } from '../unit-kind.ts'

/** The job's open units of `kind` under a live lease, with their holder (`host/pid/…`): the candidates for a takeover. */
export async function selectUnitLeases(db: Kysely<StateDatabase>, kind: UnitKind, jobId: string): Promise<{ id: number; leaseOwner: string }[]> {
  const r = await sql<{ id: number | string; lease_owner: string }>`
    select id, lease_owner from ${sql.id('chatferry', kind.table)}
    where job_id = ${jobId} and status = any(${kind.open}::text[]) and lease_owner is not null and lease_expires_at > now()`.execute(db)
  return r.rows.map((row) => ({ id: Number(row.id), leaseOwner: row.lease_owner }))
}
