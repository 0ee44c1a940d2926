import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/**
 * Hands a claimed file back untried (the store went away, the run stops): lease cleared, no
 * attempt counted, fenced by the claim. The next claim of any holder takes it again.
 */
export async function releaseFile(db: Kysely<StateDatabase>, args: { id: number; owner: string; fence: number }): Promise<void> {
  await sql`
    update chatferry.files set lease_owner = null, lease_until = null, updated_at = now()
    where id = ${args.id} and lease_owner = ${args.owner} and fence = ${args.fence} and state = 'planned'`.execute(db)
}
