import { type Kysely, sql } from 'kysely'

import type { StateDatabase, UpdateKind, UpdatePolicy, UpdateStatus } from '../schema.ts'

/** Update intents of a job counted per entity, kind, policy and status. */
export interface UpdateCountRow {
  readonly entity: string
  readonly kind: UpdateKind
  readonly policy: UpdatePolicy
  readonly status: UpdateStatus
  readonly n: number
}

/** Counts the job's update intents (`chatferry.updates`) for `status` and the reports; reads `updates_status_idx`. */
export async function countUpdates(db: Kysely<StateDatabase>, jobId: string): Promise<UpdateCountRow[]> {
  const r = await sql<UpdateCountRow>`
    select entity, kind, policy, status, count(*)::int as n from chatferry.updates
    where job_id = ${jobId} group by 1, 2, 3, 4 order by 1, 2, 3, 4`.execute(db)
  return r.rows
}
