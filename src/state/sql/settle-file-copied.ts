import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** What a copy proved: the bytes' size, SHA-256 and sniffed type, where they are in the store. */
export interface FileCopy {
  readonly bytes: number
  readonly sha256: string
  readonly sniffedType: string
  readonly storeKey: string
  readonly publicUrl: string
}

/**
 * Settles a file `copied` with what its copy proved, fenced by the claim (`owner` and `fence`):
 * false when another holder took the file over meanwhile (then nothing is written).
 */
export async function settleFileCopied(
  db: Kysely<StateDatabase>,
  args: { id: number; owner: string; fence: number; copy: FileCopy },
): Promise<boolean> {
  const { copy } = args
  const r = await sql`
    update chatferry.files set state = 'copied', bytes = ${copy.bytes}, sha256 = ${copy.sha256}, sniffed_type = ${copy.sniffedType},
      store_key = ${copy.storeKey}, public_url = ${copy.publicUrl}, attempts = attempts + 1,
      last_error_cause = null, last_error_reason = null, on_failure = null,
      lease_owner = null, lease_until = null, copied_at = now(), updated_at = now()
    where id = ${args.id} and lease_owner = ${args.owner} and fence = ${args.fence} and state = 'planned'
    returning id`.execute(db)
  return r.rows.length > 0
}
