import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** The rows one purge removed, per table of the ledger. */
export interface PurgedRows {
  items: number
  updates: number
  batches: number
  cursors: number
  runs: number
  reports: number
  idMap: number
  workers: number
  acceptedRejects: number
  jobs: number
}

/**
 * Deletes everything the ledger holds for one job — its items (with their payloads: message
 * bodies, names, e-mail addresses), update intents (with their bodies), batches, cursors, runs, plan and verify reports, id map, worker
 * rows, the operator's accepted rejects (with their reasons) and the job row — in one statement per table, so the caller's transaction removes all or
 * nothing. The apps' quota budgets are not the job's (they hold only timings) and stay.
 */
export async function deleteJob(db: Kysely<StateDatabase>, jobId: string): Promise<PurgedRows> {
  const count = async (table: string): Promise<number> => {
    const r = await sql<{
      n: number
    }>`with d as (delete from ${sql.table(`chatferry.${table}`)} where ${sql.ref(table === 'jobs' ? 'id' : 'job_id')} = ${jobId} returning 1)
      select count(*)::int as n from d`.execute(db)
    return r.rows[0]?.n ?? 0
  }
  return {
    items: await count('items'),
    updates: await count('updates'),
    batches: await count('batches'),
    cursors: await count('cursors'),
    runs: await count('runs'),
    reports: await count('reports'),
    idMap: await count('id_map'),
    workers: await count('workers'),
    acceptedRejects: await count('accepted_rejects'),
    jobs: await count('jobs'),
  }
}
