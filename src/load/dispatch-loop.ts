/**
 * The dispatch loop: fetch batch jobs from pg-boss (SKIP LOCKED, leased), pack more when there are
 * none, claim the fetched batches together, and hand each to a sender lane (process-batch.ts). A
 * `load` ends when the ledger is drained; a `worker` serves until stopped.
 */
import type { Job } from 'pg-boss'

import { type Claim, claimBatches } from './claim.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import type { LoadOutcomeStatus } from './loader.ts'
import type { LoaderRun } from './loader-run.ts'
import { packBatches } from './pack-batches.ts'
import { processBatch } from './process-batch.ts'
import { sleep } from './sleep.ts'
import { takeOverDeadLeases } from './take-over-dead-leases.ts'
import type { BatchJobData } from './work-queue.ts'

/** Runs until drained (`done`, load mode only), stopped or halted (`stopped`); waits for the lanes either way. */
export async function dispatchLoop(run: LoaderRun): Promise<LoadOutcomeStatus> {
  const { lanes, stop, watch } = run
  await takeOverDeadLeases(run)
  let idle = 0
  let lastMaintenance = Date.now()
  // A process holds up to twice its concurrency in batches: the running ones and as many claimed
  // ahead, fetched and claimed together whenever half of them are done (not once per batch).
  const holdMax = run.settings.concurrency * 2
  while (!stop.signal.aborted && run.fatal === undefined) {
    // Checked while the lanes wait in backoffs too: the give-up must not wait for the next failure.
    if (watch.exceeded()) {
      run.halt(new FatalLoadError(watch.giveUpMessage()))
      break
    }
    if (lanes.size + lanes.pending > holdMax - Math.max(1, Math.floor(holdMax / 2))) {
      await Promise.race([new Promise<void>((resolve) => lanes.addEventListener('next', () => resolve(), { once: true })), sleep(250, stop.signal)])
      continue
    }
    const jobs = await fetchJobs(run, holdMax - lanes.pending - lanes.size)
    if (jobs.length === 0) {
      if (lanes.pending === 0 && run.options.mode === 'load' && (await run.store.batches.drained(run.jobId))) {
        await lanes.onIdle()
        return 'done'
      }
      idle++
      if (Date.now() - lastMaintenance > 5000) {
        lastMaintenance = Date.now()
        await takeOverDeadLeases(run)
      }
      await sleep(Math.min(idleCapMs(run), 50 * idle), stop.signal)
      continue
    }
    idle = 0
    if (!(await dispatch(run, jobs))) {
      continue
    }
    // Keep the queue ahead of the senders.
    if (Math.random() < 0.2) {
      void packBatches(run).catch((err: unknown) => run.log.warn({ err }, 'packing failed'))
    }
  }
  await lanes.onIdle()
  return 'stopped'
}

/**
 * The longest idle pause between two looks for work: half a second, or a quarter of the quota's
 * slot when that is longer (at most 2 s): a slow quota (a fleet's many apps at a low rate) has
 * nothing to send sooner, and a fleet process runs one such loop per tenant.
 */
function idleCapMs(run: LoaderRun): number {
  return Math.max(500, Math.min(2000, run.budgetFor('messages').intervalMs / 4))
}

/** Fetches up to `free` batch jobs; when there are none, packs and tries once more. */
async function fetchJobs(run: LoaderRun, free: number): Promise<Job<BatchJobData>[]> {
  const { queue } = run
  const jobs = await queue.boss.fetch<BatchJobData>(queue.name, { batchSize: free })
  if (jobs.length > 0) {
    return jobs
  }
  await packBatches(run)
  return queue.boss.fetch<BatchJobData>(queue.name, { batchSize: free })
}

/** Claims the fetched jobs' batches and puts each on a lane; false when claiming failed (the jobs come back later). */
async function dispatch(run: LoaderRun, jobs: readonly Job<BatchJobData>[]): Promise<boolean> {
  let claims: Map<number, Claim>
  try {
    claims = await claimBatches(
      run,
      jobs.map((j) => j.data.batchId),
    )
  } catch (err) {
    // The fetched jobs stay active in pg-boss until their lease expires, then come back.
    run.log.error({ err, batches: jobs.map((j) => j.data.batchId) }, 'claiming batches failed; they will be retried')
    run.watch.failure(`the ledger: ${(err as Error).message}`)
    await sleep(250, run.stop.signal)
    return false
  }
  for (const job of jobs) {
    const c = claims.get(job.data.batchId)
    if (c !== undefined) {
      run.hold(c)
    }
    run.lanes
      .add(async () => {
        try {
          await processBatch(run, job, c)
        } finally {
          if (c !== undefined) {
            run.letGo(c)
          }
        }
      })
      .catch((err: unknown) => {
        if (err instanceof FatalLoadError) {
          run.halt(err)
        } else {
          run.log.error({ err, batch: job.data.batchId }, 'batch failed; it will be retried')
          run.watch.failure(`the ledger: ${(err as Error).message}`)
        }
      })
  }
  return true
}
