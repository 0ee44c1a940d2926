import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Creates (or empties) the temporary table `chatferry_seen_keys` of the legacy ids a keys-only read
 * of the source found, on the connection `db` is bound to; the vanished-item comparison anti-joins
 * the ledger's done items with it. Temporary: it lives and dies with that connection.
 */
export async function createSeenKeysTable(db: Kysely<StateDatabase>): Promise<void> {
  await sql`create temporary table if not exists chatferry_seen_keys (legacy_id text primary key) on commit preserve rows`.execute(db)
  await sql`truncate chatferry_seen_keys`.execute(db)
}
