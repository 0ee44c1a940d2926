/**
 * The file leases of dead processes on this host (their PID is gone) end at once, so a run after
 * a SIGKILL copies their files again without waiting out the lease. Holders elsewhere come back
 * when their lease expires.
 */
import { pidAlive } from '../../lib.ts'
import type { LedgerStore } from '../../state/index.ts'

/** Of these lease holders (`host/pid`), those of this host that are no longer alive. */
export function deadHolders(owners: readonly string[], host: string, pid: number, alive: (pid: number) => boolean): string[] {
  return owners.filter((o) => {
    const [h, p] = o.split('/')
    return h === host && Number(p) !== pid && !alive(Number(p))
  })
}

export async function takeOverFileLeases(store: Pick<LedgerStore, 'files'>, jobId: string, host: string): Promise<number> {
  const dead = deadHolders(await store.files.leaseOwners(jobId), host, process.pid, pidAlive)
  return store.files.expireLeases(jobId, dead)
}
