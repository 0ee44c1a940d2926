import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Removes a worker that finished. */
export async function deleteWorker(db: Kysely<StateDatabase>, workerId: string): Promise<void> {
  await db.deleteFrom('chatferry.workers').where('id', '=', workerId).execute()
}
