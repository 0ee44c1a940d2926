import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** One row of {@link countOpenWork}: items of an entity in a status, or its open batches. */
export interface OpenWorkRow {
  readonly entity: string
  /** `planned`, `sent` (items) or `open` (batches). */
  readonly status: 'planned' | 'sent' | 'open'
  readonly n: number
}

/**
 * Counts what a job's load still has to do: items `planned` or `sent` per entity
 * (`items_open_idx`) and batches still `open` per entity (`batches_open_idx`). `run --delta
 * --final` refuses to start while any is left: the cutover's last read must not overtake the
 * bulk load.
 */
export async function countOpenWork(db: Kysely<StateDatabase>, jobId: string): Promise<OpenWorkRow[]> {
  const rows = await sql<{ entity: string; status: 'planned' | 'sent' | 'open'; n: number }>`
    select entity, status, count(*)::int as n from chatferry.items
    where job_id = ${jobId} and status in ('planned', 'sent') group by 1, 2
    union all
    select entity, 'open' as status, count(*)::int as n from chatferry.batches
    where job_id = ${jobId} and status = 'open' group by 1`.execute(db)
  return rows.rows.map((r) => ({ entity: r.entity, status: r.status, n: Number(r.n) }))
}
