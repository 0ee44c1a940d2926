/** The live loader processes of the ledger (`chatferry.workers`): register, heartbeat, remove. */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { deleteWorker } from './sql/delete-worker.ts'
import { insertWorker } from './sql/insert-worker.ts'
import { touchWorker } from './sql/touch-worker.ts'

export interface WorkerRecord {
  /** `host/pid/random`: unique per process run; also the lease owner of the batches it claims. */
  readonly id: string
  readonly jobId: string
  /** The machine, as far as PIDs are comparable (hostname and boot id). */
  readonly hostKey: string
  readonly pid: number
  /** `load` or `worker`. */
  readonly role: string
}

export interface WorkerRegistry {
  register(worker: WorkerRecord): Promise<void>
  /** Marks the worker alive now (called every few seconds). */
  heartbeat(workerId: string): Promise<void>
  remove(workerId: string): Promise<void>
}

export function createWorkerRegistry(db: Kysely<StateDatabase>): WorkerRegistry {
  return {
    register: (worker) => insertWorker(db, worker),
    heartbeat: (workerId) => touchWorker(db, workerId),
    remove: (workerId) => deleteWorker(db, workerId),
  }
}
