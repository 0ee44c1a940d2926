import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** How many updates of one kind are in one status. */
export interface UpdateStateCount {
  readonly entity: string
  readonly kind: string
  readonly status: string
  readonly count: number
}

/** The job's updates counted per entity, kind and status (what `status` and the summaries show of the update lane). */
export async function countUpdateStates(db: Kysely<StateDatabase>, jobId: string): Promise<UpdateStateCount[]> {
  const r = await sql<{ entity: string; kind: string; status: string; n: number | string }>`
    select entity, kind, status, count(*)::int as n from chatferry.updates
    where job_id = ${jobId} group by entity, kind, status order by entity, kind, status`.execute(db)
  return r.rows.map((row) => ({ entity: row.entity, kind: row.kind, status: row.status, count: Number(row.n) }))
}
