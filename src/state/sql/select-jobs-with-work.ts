import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Of `jobIds`, those whose load has work: an item `planned` or `sent` (`items_open_idx`), a batch
 * still `open` (`batches_open_idx`), or an update `planned` or `sent` (`updates_status_idx`). One
 * statement for a whole fleet, each test a probe of a partial or leading-column index that stops
 * at the first row, so a fleet worker can ask it every few seconds for all its tenants.
 */
export async function selectJobsWithWork(db: Kysely<StateDatabase>, jobIds: readonly string[]): Promise<string[]> {
  if (jobIds.length === 0) {
    return []
  }
  const r = await sql<{ job_id: string }>`
    select j.job_id from unnest(${[...jobIds]}::text[]) as j(job_id)
    where exists (select 1 from chatferry.items i where i.job_id = j.job_id and i.status in ('planned', 'sent'))
       or exists (select 1 from chatferry.batches b where b.job_id = j.job_id and b.status = 'open')
       or exists (select 1 from chatferry.updates u where u.job_id = j.job_id and u.status in ('planned', 'sent'))`.execute(db)
  return r.rows.map((row) => row.job_id)
}
