import { type Kysely, sql } from 'kysely'

import type { StateDatabase, UpdateKind, UpdatePolicy, UpdateStatus } from '../schema.ts'

/** One recorded update intent, as a report shows it. */
export interface UpdateSampleRow {
  readonly entity: string
  readonly kind: UpdateKind
  readonly policy: UpdatePolicy
  readonly status: UpdateStatus
  readonly legacyId: string
  readonly targetKey: string
  readonly reason: string | null
  readonly errorCode: string | null
}

/** The first `perKind` update intents of each entity, kind and status of a job (oldest first), for the reports. */
export async function selectUpdateSamples(db: Kysely<StateDatabase>, jobId: string, perKind: number): Promise<UpdateSampleRow[]> {
  const r = await sql<UpdateSampleRow>`
    select entity, kind, policy, status, legacy_id as "legacyId", target_key as "targetKey", reason, error_code as "errorCode"
    from (
      select u.*, row_number() over (partition by entity, kind, status order by id) as nth
      from chatferry.updates u where job_id = ${jobId}) s
    where nth <= ${perKind} order by entity, kind, status, id`.execute(db)
  return r.rows
}
