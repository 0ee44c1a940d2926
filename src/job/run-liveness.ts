/**
 * Whether a run the ledger calls `running` is still alive. A process killed with SIGKILL (or a
 * machine that lost power) never writes its end: its row stays `running`. Every running process
 * writes its run's heartbeat every {@link RUN_HEARTBEAT_MS} (run-row.ts, for the whole run); a run is dead when its heartbeat is older than {@link RUN_STALE_AFTER_MS}, or
 * at once when its owner ran on this machine and that pid is gone. Only judges: the rows are written
 * by run-row.ts (a live run's own row, and `markDeadRuns` for the dead).
 */
import { pidAlive } from '../lib.ts'
import { hostKey } from '../load/host-key.ts'
import type { RunStatus } from '../state/schema.ts'
import type { RunRecord } from '../state/store.ts'

/** How often a running process writes its run's heartbeat. */
export const RUN_HEARTBEAT_MS = 5000
/** Six missed heartbeats: a run silent for this long is dead, wherever it ran. */
export const RUN_STALE_AFTER_MS = 6 * RUN_HEARTBEAT_MS

/** The owner of a run row: `<host>/<pid>/…` (loaders, workers, `run`), or `pid:<pid>` (older `run` rows, host unknown). */
export function runOwnerProcess(owner: string | null): { host?: string; pid: number } | undefined {
  if (owner === null) {
    return undefined
  }
  const old = /^pid:(\d+)$/.exec(owner)
  if (old) {
    return { pid: Number(old[1]) }
  }
  // The host is everything before the first slash (a host key has none): a greedy match would take
  // a role of digits only (a loader's random id, about one in 40) for the pid, and the host for another
  // machine's, so a SIGKILLed process would look alive until its heartbeat went stale.
  const m = /^([^/]+)\/(\d+)(?:\/.*)?$/.exec(owner)
  return m ? { host: m[1] as string, pid: Number(m[2]) } : undefined
}

/** The owner string a run row of this process carries. */
export function runOwnerOfThisProcess(role: string): string {
  return `${hostKey()}/${process.pid}/${role}`
}

/** Why a `running` row is dead, or undefined while it is alive. */
export function deadRunReason(run: RunRecord, now = Date.now(), host = hostKey(), alive: (pid: number) => boolean = pidAlive): string | undefined {
  if (run.status !== 'running') {
    return undefined
  }
  const owner = runOwnerProcess(run.owner)
  if (owner?.host === host && owner.pid !== process.pid && !alive(owner.pid)) {
    return `its process (pid ${owner.pid} on this machine) is gone`
  }
  const silentMs = now - run.heartbeatAt.getTime()
  if (silentMs > RUN_STALE_AFTER_MS) {
    return `no heartbeat for ${Math.round(silentMs / 1000)} s (last ${run.heartbeatAt.toISOString()})`
  }
  return undefined
}

/** The status to show: `interrupted` for a `running` row whose process died. */
export function shownStatus(run: RunRecord, now = Date.now()): RunStatus {
  return deadRunReason(run, now) !== undefined ? 'interrupted' : run.status
}
