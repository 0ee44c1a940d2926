import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** A content-addressed store key with the size its bytes must have. */
export interface SizedStoreKey {
  readonly storeKey: string
  readonly bytes: number
}

/**
 * Which of these keys another file of the job is already `copied` under with that many bytes: the
 * copy that put it settled after the store answered, so the store holds the object and a file
 * with the same bytes needs neither an upload nor a look at the store (dedupe from the ledger).
 * The files lane asks once for the copies that reached this step together (its
 * copied-key-lookup.ts), not once per file. Served by `files_copied_key_idx`.
 */
export async function selectCopiedStoreKeys(
  db: Kysely<StateDatabase>,
  args: { jobId: string; keys: readonly SizedStoreKey[] },
): Promise<SizedStoreKey[]> {
  if (args.keys.length === 0) {
    return []
  }
  const r = await sql<{ store_key: string; bytes: string | number }>`
    select distinct f.store_key, f.bytes from chatferry.files f
    join unnest(${args.keys.map((k) => k.storeKey)}::text[], ${args.keys.map((k) => k.bytes)}::bigint[]) as k(store_key, bytes)
      on f.store_key = k.store_key and f.bytes = k.bytes
    where f.job_id = ${args.jobId} and f.state = 'copied'`.execute(db)
  return r.rows.map((row) => ({ storeKey: row.store_key, bytes: Number(row.bytes) }))
}
