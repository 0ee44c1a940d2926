import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Counts a job's member items that are planned, in flight or loaded (`chatferry.items`, not
 * skipped or rejected), per group (`guid`) and per user (`uid`) of their payload: where a resumed
 * plan starts counting the platform's member limits from.
 */
export async function countMemberships(db: Kysely<StateDatabase>, jobId: string): Promise<{ kind: 'group' | 'user'; id: string; n: number }[]> {
  const rows = await sql<{ kind: 'group' | 'user'; id: string; n: number }>`
    with m as (
      select (payload::jsonb) ->> 'guid' as guid, (payload::jsonb) ->> 'uid' as uid from chatferry.items
      where job_id = ${jobId} and entity = 'members' and status in ('planned', 'sent', 'done') and payload is not null)
    select 'group' as kind, guid as id, count(*)::int as n from m group by guid
    union all
    select 'user' as kind, uid as id, count(*)::int as n from m group by uid`.execute(db)
  return rows.rows
}
