import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** An update not applied because its item changed on the platform. */
export interface UpdateConflictRow {
  readonly entity: string
  readonly kind: string
  readonly legacyId: string
  readonly targetKey: string
  /** `conflict` (`changes.conflicts: report`) or `dropped` (`platform-wins`). */
  readonly status: 'conflict' | 'dropped'
  /** The change it would have made, and what the platform said changed (trigger, when received). */
  readonly reason: string | null
  readonly settledAt: Date | null
}

/** The job's updates settled `conflict` (and `dropped` when asked), oldest first, for `status` and the reports (`updates_status_idx`). */
export async function selectUpdateConflicts(
  db: Kysely<StateDatabase>,
  jobId: string,
  args: { limit: number; withDropped: boolean },
): Promise<UpdateConflictRow[]> {
  const statuses = args.withDropped ? ['conflict', 'dropped'] : ['conflict']
  const r = await sql<{
    entity: string
    kind: string
    legacy_id: string
    target_key: string
    status: 'conflict' | 'dropped'
    reason: string | null
    settled_at: Date | null
  }>`
    select entity, kind, legacy_id, target_key, status, settled_at,
      -- held back by the lane: its note is the error message (the reason stays the change's)
      case when error_code = 'CHANGED_ON_PLATFORM' then concat_ws('; ', reason, error_message) else reason end as reason
    from chatferry.updates
    where job_id = ${jobId} and status = any(${statuses}::text[])
    order by id limit ${args.limit}`.execute(db)
  return r.rows.map((row) => ({
    entity: row.entity,
    kind: row.kind,
    legacyId: row.legacy_id,
    targetKey: row.target_key,
    status: row.status,
    reason: row.reason,
    settledAt: row.settled_at === null ? null : new Date(row.settled_at),
  }))
}
