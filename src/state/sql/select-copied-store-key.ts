import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Whether another file of the job is already `copied` under this store key with this many bytes:
 * the copy that put it settled after the store answered, so the store holds the object and a
 * file with the same bytes needs neither an upload nor a look at the store (dedupe from the
 * ledger). Served by `files_copied_key_idx`.
 */
export async function selectCopiedStoreKey(db: Kysely<StateDatabase>, args: { jobId: string; storeKey: string; bytes: number }): Promise<boolean> {
  const r = await sql`
    select 1 from chatferry.files
    where job_id = ${args.jobId} and state = 'copied' and store_key = ${args.storeKey} and bytes = ${args.bytes}
    limit 1`.execute(db)
  return r.rows.length > 0
}
