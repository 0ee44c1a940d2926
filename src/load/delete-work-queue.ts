/**
 * Deleting a ledger job's pg-boss queue (`chatferry purge`): its jobs and archived jobs, then the
 * queue through pg-boss's own API, which drops the queue's row and its job partition, so nothing of
 * the job is left in `chatferry_boss`.
 */
import { PgBoss } from 'pg-boss'

import type { LedgerSessions } from '../state/ledger-sessions.ts'
import { BOSS_SCHEMA, queueName } from './work-queue.ts'

/**
 * Deletes the queue of `jobId` when pg-boss is installed in the ledger's database and the queue
 * exists; returns whether there was one. `url` is the ledger's server (absent for the embedded store).
 */
export async function deleteWorkQueue(sessions: LedgerSessions, jobId: string, url?: string): Promise<boolean> {
  const installed = await sessions.withSession((s) => s.executeSql(`select to_regclass('${BOSS_SCHEMA}.queue') is not null as installed`))
  if (!(installed.rows[0] as { installed?: boolean } | undefined)?.installed) {
    return false
  }
  const common = { schema: BOSS_SCHEMA, supervise: false, schedule: false, migrate: false }
  const boss =
    sessions.embedded !== undefined
      ? new PgBoss({ ...common, db: { executeSql: (text: string, values: unknown[] = []) => sessions.embedded!.executeSql(text, values) } })
      : new PgBoss({ ...common, connectionString: url, max: 1, application_name: 'chatferry-purge' })
  boss.on('error', () => {})
  await boss.start()
  try {
    const name = queueName(jobId)
    if ((await boss.getQueue(name)) === null) {
      return false
    }
    // pg-boss drops the queue's partition, but its queue row is held by the jobs' foreign key
    // (ON DELETE RESTRICT) while any job of the queue is left: those go first, with the archive's.
    await sessions.withSession(async (s) => {
      await s.executeSql(`delete from ${BOSS_SCHEMA}.job where name = $1`, [name])
      // pg-boss 10 kept finished jobs in an archive table; pg-boss 12 has none.
      const archive = await s.executeSql(`select to_regclass('${BOSS_SCHEMA}.archive') is not null as present`)
      if ((archive.rows[0] as { present?: boolean } | undefined)?.present) {
        await s.executeSql(`delete from ${BOSS_SCHEMA}.archive where name = $1`, [name])
      }
    })
    await boss.deleteQueue(name)
    return true
  } finally {
    await boss.stop({ graceful: false, close: true, timeout: 2000 })
  }
}
