import { type RawBuilder, sql } from 'kysely'

/**
 * A SQL fragment true when the item aliased `i` is a loaded item of the job and entity that a
 * key-set comparison looks at: done, with a legacy id (not an extra item), not marked vanished
 * (`items_done_legacy_idx`). Shared by the vanished-item count, page and probe.
 */
export function comparedLoaded(jobId: string, entity: string): RawBuilder<unknown> {
  return sql`i.job_id = ${jobId} and i.entity = ${entity} and i.status = 'done' and i.legacy_id not like '~%' and i.vanished_at is null`
}
