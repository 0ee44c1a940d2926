import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Which of these legacy member ids already have a member item planned, in flight or loaded
 * (`chatferry.items`): a delta plan re-reads changed memberships, which `count-memberships` has
 * counted already and must not count against the member limits twice.
 */
export async function selectCountedMembers(db: Kysely<StateDatabase>, jobId: string, legacyIds: readonly string[]): Promise<string[]> {
  if (legacyIds.length === 0) {
    return []
  }
  const rows = await sql<{ legacy_id: string }>`
    select distinct legacy_id from chatferry.items
    where job_id = ${jobId} and entity = 'members' and status in ('planned', 'sent', 'done') and legacy_id = any(${[...legacyIds]}::text[])`.execute(
    db,
  )
  return rows.rows.map((r) => r.legacy_id)
}
