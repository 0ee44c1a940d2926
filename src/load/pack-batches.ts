/**
 * Packing: planned items of the current entity into full batches, each a ledger row and a pg-boss
 * job written in one transaction, up to the queue depth. The SQL: src/state/batch-ledger.ts `pack`.
 */
import type { LoaderRun } from './loader-run.ts'

/** Packs batches of the current entity up to the queue depth; returns how many (0 when another process is packing). */
export function packBatches(run: LoaderRun): Promise<number> {
  return run.store.batches.pack(run.jobId, { depth: run.depth, itemsPerRequest: run.options.itemsPerRequest }, (trx, batchIds) =>
    run.queue.enqueue(trx, batchIds),
  )
}
