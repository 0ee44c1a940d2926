/**
 * One fetched batch job, from claim to ledger: send it (send-batch.ts), then settle its answer
 * (result-settler.ts), split it in halves, isolate the rows of a failed message request that did
 * not land (isolate-rows.ts), or hand it back, each fenced by the claim's lease and in one
 * transaction with its pg-boss job's change.
 */
import type { Job } from 'pg-boss'

import type { ImportResult } from '../target/client.ts'
import type { Claim } from './claim.ts'
import { type Isolation, ISOLATION_CODE, isolationMessage } from './isolate-rows.ts'
import type { LoaderRun } from './loader-run.ts'
import { sendBatch, type Settlement } from './send-batch.ts'
import { settleItemResults } from './settle-item-results.ts'
import type { BatchJobData } from './work-queue.ts'

/** Sends the job's claimed batch and records the outcome; `c` is undefined when the batch was no longer open. */
export async function processBatch(run: LoaderRun, job: Job<BatchJobData>, c: Claim | undefined): Promise<void> {
  const { queue } = run
  if (c === undefined) {
    // Settled already (the pg-boss job outlived it): nothing to send.
    await queue.boss.complete(queue.name, job.id)
    return
  }
  if (c.items.length === 0) {
    const ok = await run.store.batches.finishEmpty(c, async (trx) => {
      await queue.boss.complete(queue.name, job.id, {}, { db: queue.adapter(trx) })
    })
    if (!ok) {
      run.fencedOut(c.batchId)
    }
    return
  }
  let outcome: Settlement
  try {
    outcome = await sendBatch(run, c)
  } catch (err) {
    await releaseBatch(run, c, job.id, 'FATAL', (err as Error).message).catch(() => {})
    throw err
  }
  if (outcome.kind === 'results') {
    await settleResults(run, c, job.id, outcome.result)
  } else if (outcome.kind === 'isolate') {
    await isolateBatch(run, c, job.id, outcome.isolation, outcome.code)
  } else if (outcome.kind === 'split') {
    await splitBatch(run, c, job.id, outcome.code, outcome.message)
  } else {
    await releaseBatch(run, c, job.id, outcome.code, outcome.message)
  }
}

function settleResults(run: LoaderRun, c: Claim, jobIdInQueue: string, result: ImportResult): Promise<void> {
  return run.settler.settle(c, jobIdInQueue, result)
}

/** Splits the batch in halves (new batches and jobs), or rejects its single item; completes its job. */
async function splitBatch(run: LoaderRun, c: Claim, jobIdInQueue: string, code: string, message: string): Promise<void> {
  const { queue } = run
  const batch = { report: c, entity: c.entity, keys: c.items.map((i) => i.key) }
  const ok = await run.store.batches.split(run.jobId, batch, { code, message }, async (trx, halves) => {
    if (halves.length > 0) {
      await queue.enqueue(trx, halves)
    }
    await queue.boss.complete(queue.name, jobIdInQueue, {}, { db: queue.adapter(trx) })
  })
  if (!ok) {
    run.fencedOut(c.batchId)
    return
  }
  run.counters.batchesSplit++
  if (c.items.length <= 1) {
    run.counters.itemsRejected += c.items.length
  }
  run.log.info({ batch: c.batchId, items: c.items.length, code }, c.items.length <= 1 ? 'poison item rejected' : 'batch split in halves')
}

/**
 * Records a read-back's isolation (store.batches.isolate): the rows found done, each suspect in a
 * batch of its own (queued), the others planned again; completes the batch's job.
 */
async function isolateBatch(run: LoaderRun, c: Claim, jobIdInQueue: string, iso: Isolation, platformCode: string): Promise<void> {
  const { queue } = run
  const { items: landed } = settleItemResults(
    c.items.filter((i) => iso.landed.has(i.key)),
    new Map(iso.landed),
  )
  const message = isolationMessage(c.batchId, c.items.length, iso, platformCode)
  const rows = { landed, alone: iso.alone, together: iso.together, again: iso.again }
  const ok = await run.store.batches.isolate(
    run.jobId,
    { report: c, entity: c.entity },
    rows,
    { code: ISOLATION_CODE, message },
    async (trx, batchIds) => {
      if (batchIds.length > 0) {
        await queue.enqueue(trx, batchIds)
      }
      await queue.boss.complete(queue.name, jobIdInQueue, {}, { db: queue.adapter(trx) })
    },
  )
  if (!ok) {
    run.fencedOut(c.batchId)
    return
  }
  run.counters.batchesSplit++
  run.counters.itemsDone += landed.length
  run.counters.itemsRequeued += iso.again.length
  run.log.info(
    { batch: c.batchId, landed: landed.length, alone: iso.alone, together: iso.together.length, again: iso.again.length },
    'rows of a failed message request isolated',
  )
}

/** Hands the batch back: its items stay `sent`, and its job fails so that pg-boss offers it again a second later. */
async function releaseBatch(run: LoaderRun, c: Claim, jobIdInQueue: string, code: string, message: string): Promise<void> {
  const { queue } = run
  const ok = await run.store.batches.release(c, { code, message }, async (trx) => {
    await queue.boss.fail(queue.name, jobIdInQueue, { code, message }, { db: queue.adapter(trx) })
  })
  if (ok) {
    run.counters.batchesReleased++
  } else {
    run.fencedOut(c.batchId)
  }
}
