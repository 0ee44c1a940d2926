import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Drops the temporary table of {@link createSeenKeysTable} (see `create-seen-keys-table.ts`). */
export async function dropSeenKeysTable(db: Kysely<StateDatabase>): Promise<void> {
  await sql`drop table if exists chatferry_seen_keys`.execute(db)
}
