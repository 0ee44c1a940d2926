import type { Kysely } from 'kysely'

import type { StateDatabase } from '../schema.ts'

/** Registers a live loader process (`status` lists them; the heartbeat shows it is alive). */
export async function insertWorker(
  db: Kysely<StateDatabase>,
  worker: { id: string; jobId: string; hostKey: string; pid: number; role: string },
): Promise<void> {
  await db
    .insertInto('chatferry.workers')
    .values({ id: worker.id, job_id: worker.jobId, host_key: worker.hostKey, pid: worker.pid, role: worker.role })
    .execute()
}
