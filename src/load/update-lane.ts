/**
 * The update lane: applies the job's recorded update intents (`chatferry.updates`, planned by a
 * delta run) through the chat interface, paced by the chat budget, crash-safe. It runs after the
 * import lane has drained (`run`, `run --delta`, `load`; a `worker` serves both): an update only
 * ever touches an item the platform holds, and an edit never reaches the platform before its
 * message.
 *
 * - **Claim**: up to `load.updateConcurrency` updates at a time under a lease (`load.leaseSeconds`),
 *   oldest first, one update of an item at a time across every process (store.updateLane.claim).
 * - **Each update** (settle-update.ts): `sent` before its call, settled from the answer; refusals
 *   rejected with their code and the run goes on; transient failures retried, then handed back.
 * - **Crash**: an update found `sent` with an expired lease is checked against the platform's state
 *   before anything is sent again (check-ambiguous-update.ts). A dead process on this host loses its
 *   leases at once (its pid is gone); elsewhere when they expire.
 * - **Outage**: failures without a success for `load.giveUpAfterMs` stop the lane (exit 1), nothing
 *   rejected; **credentials** refused (401/403) stop it at once (exit 2).
 * - **Ledger errors** are counted (`counters.ledgerErrors`, the metrics' `lane="update"`): an
 *   update whose ledger write failed is retried once its lease ends; the loop's own operations
 *   (claims, the drained checks, dead holders' leases) are retried with backoff through a transient
 *   failure (ledger-retry.ts), and one that keeps failing for `load.giveUpAfterMs`, or fails with a
 *   permanent error (ledger-error-kind.ts), ends the lane (exit 1) with an error naming it.
 */
import { pidAlive } from '../lib.ts'
import type { ClaimedUpdate } from '../state/update-lane-ledger.ts'
import { FatalLoadError } from './fatal-load-error.ts'
import type { LoadOutcomeStatus } from './loader-types.ts'
import { processUpdate } from './settle-update.ts'
import { sleep } from './sleep.ts'
import { deadHolderBatches } from './take-over-dead-leases.ts'
import { type UpdateLaneCounters, type UpdateLaneOptions, UpdateLaneRun } from './update-lane-run.ts'

export type { UpdateLaneCounters, UpdateLaneOptions }

export interface UpdateLaneOutcome {
  /** `done`: nothing left to apply (`rejected` when some update of the job is rejected); `stopped`; `failed`. */
  readonly status: LoadOutcomeStatus
  readonly counters: UpdateLaneCounters
  readonly error?: Error
}

/** Ends the leases of updates held by dead processes of this host, so they are taken (and checked) at once. */
async function takeOverDeadLeases(lane: UpdateLaneRun): Promise<void> {
  const dead = deadHolderBatches(await lane.ledger.leased(lane.options.jobId), lane.host, process.pid, pidAlive)
  if (dead.length > 0) {
    await lane.ledger.expireLeases(dead)
    lane.log.info({ updates: dead.length }, 'took over the updates of a dead process on this host')
  }
}

/** Whether the import lane still has items to send (the update lane waits for it); undefined when stopped meanwhile. */
async function importPending(lane: UpdateLaneRun): Promise<boolean | undefined> {
  const { store, jobId } = lane.options
  const drained = await lane.ledgerRetry('checking whether the import lane is drained', () => store.batches.drained(jobId))
  return drained === undefined ? undefined : !drained.value
}

/** Claims up to `limit` updates; none while the import lane has work, or when stopped meanwhile. */
async function claimNext(lane: UpdateLaneRun, limit: number): Promise<ClaimedUpdate[]> {
  if ((await importPending(lane)) !== false) {
    return []
  }
  const { jobId } = lane.options
  const claimed = await lane.ledgerRetry('claiming updates', () =>
    lane.ledger.claim({ jobId, owner: lane.owner, leaseSeconds: lane.leaseSeconds, limit }),
  )
  return claimed?.value ?? []
}

/** Whether no update is left to apply and the import lane is drained (false when stopped meanwhile). */
async function nothingLeft(lane: UpdateLaneRun): Promise<boolean> {
  const { jobId } = lane.options
  const drained = await lane.ledgerRetry('checking whether the updates are drained', () => lane.ledger.drained(jobId))
  return drained?.value === true && (await importPending(lane)) === false
}

/** Claims and processes updates until none is left (`load`) or the lane is stopped; a loop operation that keeps failing halts it. */
async function laneLoop(lane: UpdateLaneRun): Promise<LoadOutcomeStatus> {
  const inflight = new Set<Promise<void>>()
  try {
    return await serve(lane, inflight)
  } catch (err) {
    lane.halt(err as Error)
    return 'stopped'
  } finally {
    await Promise.allSettled(inflight)
  }
}

/** The loop of {@link laneLoop}: claims up to `load.updateConcurrency` updates at a time and processes each. */
async function serve(lane: UpdateLaneRun, inflight: Set<Promise<void>>): Promise<LoadOutcomeStatus> {
  const { settings, mode } = lane.options
  let lastMaintenance = 0
  while (!lane.stop.signal.aborted) {
    if (lane.watch.exceeded()) {
      break
    }
    if (Date.now() - lastMaintenance > 5000) {
      lastMaintenance = Date.now()
      await lane.ledgerRetry("taking over dead holders' updates", () => takeOverDeadLeases(lane))
    }
    if (inflight.size >= settings.updateConcurrency) {
      await Promise.race(inflight)
      continue
    }
    const claimed = await claimNext(lane, settings.updateConcurrency - inflight.size)
    if (claimed.length === 0) {
      if (inflight.size > 0) {
        await Promise.race([...inflight, sleep(250)])
        continue
      }
      if (mode === 'load' && (await nothingLeft(lane))) {
        return 'done'
      }
      await sleep(mode === 'load' ? 250 : 1000, lane.stop.signal).catch(() => {})
      continue
    }
    for (const u of claimed) {
      const p: Promise<void> = processUpdate(lane, u)
        .catch((err: unknown) => {
          // What processUpdate throws is not the platform's answer (it settles those): a ledger operation failed.
          lane.log.error({ err, update: u.id }, 'applying an update failed; it will be retried')
          lane.counters.ledgerErrors++
          lane.watch.failure(`the ledger: ${(err as Error).message}`)
        })
        .finally(() => inflight.delete(p))
      inflight.add(p)
    }
  }
  return 'stopped'
}

/** Whether some update of the job is rejected (the lane's outcome is then `rejected`). */
async function anyRejected(lane: UpdateLaneRun): Promise<boolean> {
  const { store, jobId } = lane.options
  return ((await lane.ledgerRetry('reading the rejected updates', () => store.updateLane.rejects(jobId, { limit: 1 })))?.value.length ?? 0) > 0
}

/** Runs the update lane until no update is left (`load`) or until stopped (`worker`, a signal, a fatal error). */
export async function runUpdateLane(options: UpdateLaneOptions): Promise<UpdateLaneOutcome> {
  const lane = new UpdateLaneRun(options)
  const tick = options.onTick === undefined ? undefined : setInterval(() => options.onTick?.(lane.counters), 1000)
  let status: LoadOutcomeStatus = 'stopped'
  try {
    status = await laneLoop(lane)
    if (lane.fatal === undefined && lane.watch.exceeded()) {
      lane.halt(new FatalLoadError(lane.watch.giveUpMessage()))
    }
    if (status === 'done' && lane.fatal === undefined && (await anyRejected(lane))) {
      status = 'rejected'
    }
  } catch (err) {
    lane.halt(err as Error)
  } finally {
    clearInterval(tick)
    lane.dispose()
  }
  options.onTick?.(lane.counters)
  if (lane.fatal !== undefined) {
    lane.log.error({ err: lane.fatal, ...lane.counters }, 'the update lane stopped')
    return { status: 'failed', counters: lane.counters, error: lane.fatal }
  }
  lane.log.info({ status, ...lane.counters }, 'update lane finished')
  return { status, counters: lane.counters }
}
