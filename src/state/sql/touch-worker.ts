import { type Kysely, sql } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Moves a worker's heartbeat to now. */
export async function touchWorker(db: Kysely<StateDatabase>, workerId: string): Promise<void> {
  await db
    .updateTable('chatferry.workers')
    .set({ heartbeat_at: sql`now()` as never })
    .where('id', '=', workerId)
    .execute()
}
