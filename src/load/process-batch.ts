/**
 * One claimed batch, from claim to ledger: send it (send-batch.ts), then settle its answer
 * (result-settler.ts), split it in halves, isolate the rows of a failed message request that did
 * not land (isolate-rows.ts), or hand it back, each fenced by the claim's lease (src/state/lease-units.ts).
 */
import type { ImportResult } from '../target/client.ts'
import { type Isolation, ISOLATION_CODE, isolationMessage } from './isolate-rows.ts'
import type { Claim, LoaderRun } from './loader-types.ts'
import { sendBatch, type Settlement } from './send-batch.ts'
import { settleItemResults } from './settle-item-results.ts'

/** Sends the claimed batch and records the outcome. */
export async function processBatch(run: LoaderRun, c: Claim): Promise<void> {
  if (c.items.length === 0) {
    if (!(await run.store.batches.finishEmpty(c))) {
      run.fencedOut(c.batchId)
    }
    return
  }
  let outcome: Settlement
  try {
    outcome = await sendBatch(run, c)
  } catch (err) {
    await releaseBatch(run, c, 'FATAL', (err as Error).message).catch(() => {})
    throw err
  }
  if (outcome.kind === 'results') {
    await settleResults(run, c, outcome.result)
  } else if (outcome.kind === 'isolate') {
    await isolateBatch(run, c, outcome.isolation, outcome.code)
  } else if (outcome.kind === 'split') {
    await splitBatch(run, c, outcome.code, outcome.message)
  } else {
    await releaseBatch(run, c, outcome.code, outcome.message)
  }
}

function settleResults(run: LoaderRun, c: Claim, result: ImportResult): Promise<void> {
  return run.settler.settle(c, result)
}

/** Splits the batch in halves (new batches, claimable at once), or rejects its single item. */
async function splitBatch(run: LoaderRun, c: Claim, code: string, message: string): Promise<void> {
  const batch = { report: c, entity: c.entity, keys: c.items.map((i) => i.key) }
  const ok = await run.store.batches.split(run.jobId, batch, { code, message })
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
 * batch of its own (claimable at once), the others planned again.
 */
async function isolateBatch(run: LoaderRun, c: Claim, iso: Isolation, platformCode: string): Promise<void> {
  const { items: landed } = settleItemResults(
    c.items.filter((i) => iso.landed.has(i.key)),
    new Map(iso.landed),
  )
  const message = isolationMessage(c.batchId, c.items.length, iso, platformCode)
  const rows = { landed, alone: iso.alone, together: iso.together, again: iso.again }
  const ok = await run.store.batches.isolate(run.jobId, { report: c, entity: c.entity }, rows, { code: ISOLATION_CODE, message })
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

/** Hands the batch back: its items stay `sent`, and it can be claimed again a second later (src/state/lease-units.ts). */
async function releaseBatch(run: LoaderRun, c: Claim, code: string, message: string): Promise<void> {
  const ok = await run.store.batches.release(c, { code, message })
  if (ok) {
    run.counters.batchesReleased++
  } else {
    run.fencedOut(c.batchId)
  }
}
