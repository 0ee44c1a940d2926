/**
 * Taking over the batches of dead processes on this host (their PID is gone: no need to wait for
 * the lease to expire). Batches of dead processes elsewhere come back when their lease expires
 * (src/state/lease-units.ts).
 */
import { pidAlive } from '../lib.ts'
import type { LoaderRun } from './loader-types.ts'

/** Of the leased batches, those held by another process of this host that is no longer alive. */
export function deadHolderBatches(
  held: readonly { id: number; leaseOwner: string }[],
  host: string,
  pid: number,
  alive: (pid: number) => boolean,
): number[] {
  const dead: number[] = []
  for (const b of held) {
    const [h, owner] = b.leaseOwner.split('/')
    if (h === host && Number(owner) !== pid && !alive(Number(owner))) {
      dead.push(b.id)
    }
  }
  return dead
}

export async function takeOverDeadLeases(run: LoaderRun): Promise<void> {
  const { store, log } = run
  const dead = deadHolderBatches(await store.batches.leased(run.jobId), run.host, process.pid, pidAlive)
  if (dead.length > 0) {
    // The lease is void: the next claim bumps the token, so the dead process could not settle anyway.
    await store.batches.expireLeases(dead)
    log.info({ batches: dead.length }, 'took over the batches of a dead process on this host')
  }
}
