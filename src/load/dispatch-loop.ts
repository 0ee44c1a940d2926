/**
 * The dispatch loop: claim open batches from the ledger (SKIP LOCKED, leased and fenced:
 * src/state/lease-units.ts), pack more when there are none, and hand each to a sender lane
 * (process-batch.ts). A `load` ends when the ledger is drained; a `worker` serves until stopped.
 * The loop's own ledger operations ride out a transient failure of the ledger (ledger-retry.ts);
 * a permanent one ends the loop at once.
 */
import { claimBatches } from './claim.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import type { Claim, LoaderRun, LoadOutcomeStatus } from './loader-types.ts'
import { packBatches } from './pack-batches.ts'
import { processBatch } from './process-batch.ts'
import { sleep } from './sleep.ts'
import { takeOverDeadLeases } from './take-over-dead-leases.ts'

/** Runs until drained (`done`, load mode only), stopped or halted (`stopped`); waits for the lanes either way. */
export async function dispatchLoop(run: LoaderRun): Promise<LoadOutcomeStatus> {
  const { lanes, stop, watch } = run
  await run.ledgerRetry("taking over dead holders' batches", () => takeOverDeadLeases(run))
  let idle = 0
  let lastMaintenance = Date.now()
  // A process holds up to twice its concurrency in batches: the running ones and as many claimed
  // ahead, claimed together whenever half of them are done (not once per batch).
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
    const claims = await claimOrPack(run, holdMax - lanes.pending - lanes.size)
    if (claims === undefined) {
      continue
    }
    if (claims.length === 0) {
      if (lanes.pending === 0 && run.options.mode === 'load' && (await drained(run))) {
        await lanes.onIdle()
        return 'done'
      }
      idle++
      if (Date.now() - lastMaintenance > 5000) {
        lastMaintenance = Date.now()
        await run.ledgerRetry("taking over dead holders' batches", () => takeOverDeadLeases(run))
      }
      await sleep(Math.min(idleCapMs(run), 50 * idle), stop.signal)
      continue
    }
    idle = 0
    dispatch(run, claims)
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

/** Whether every item of the job is finished (none planned or sent); false when stopped meanwhile. */
async function drained(run: LoaderRun): Promise<boolean> {
  return (await run.ledgerRetry('checking whether the job is drained', () => run.store.batches.drained(run.jobId)))?.value === true
}

/**
 * Claims up to `free` batches; when there are none, packs and tries once more. Each step is retried
 * through a failure of the ledger (ledger-retry.ts); undefined when the loader was stopped meanwhile.
 */
async function claimOrPack(run: LoaderRun, free: number): Promise<Claim[] | undefined> {
  const claimed = await run.ledgerRetry('claiming batches', () => claimBatches(run, free))
  if (claimed === undefined || claimed.value.length > 0) {
    return claimed?.value
  }
  if ((await run.ledgerRetry('packing batches', () => packBatches(run))) === undefined) {
    return undefined
  }
  return (await run.ledgerRetry('claiming batches', () => claimBatches(run, free)))?.value
}

/** Puts each claimed batch on a sender lane, holding its lease (renewed) until it is settled or handed back. */
function dispatch(run: LoaderRun, claims: readonly Claim[]): void {
  for (const c of claims) {
    run.hold(c)
    run.lanes
      .add(async () => {
        try {
          await processBatch(run, c)
        } finally {
          run.letGo(c)
        }
      })
      .catch((err: unknown) => {
        if (err instanceof FatalLoadError) {
          run.halt(err)
        } else {
          run.log.error({ err, batch: c.batchId }, 'batch failed; it will be retried')
          run.counters.ledgerErrors++
          run.watch.failure(`the ledger: ${(err as Error).message}`)
        }
      })
  }
}
