import { type Kysely, sql } from 'kysely'

import { storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** Adds a page of legacy ids the source holds to the temporary table `chatferry_seen_keys` (one statement). */
export async function insertSeenKeys(db: Kysely<StateDatabase>, legacyIds: readonly string[]): Promise<void> {
  if (legacyIds.length === 0) {
    return
  }
  await sql`insert into chatferry_seen_keys (legacy_id)
    select * from unnest(${legacyIds.map((id) => storableText(id))}::text[]) on conflict do nothing`.execute(db)
}
