/**
 * The run row of one job run (`chatferry.runs`), the only place chatferry writes run rows: job-run.ts
 * opens it once per run ({@link openRunRow}) and hands it down; nobody looks for "its" row again.
 * While the run lives the row beats every {@link RUN_HEARTBEAT_MS} (`status` and `runs` call a silent
 * run dead, run-liveness.ts) and carries everything the run recorded so far in its stats — the plan
 * summary, the loader's counters, the update lane's, a final delta's cutover record — each write
 * carrying them all. It is finished once, with its outcome. {@link markDeadRuns} writes the end a
 * process killed with SIGKILL never wrote.
 */
import type { LoaderCounters } from '../load/loader.ts'
import type { RunMode, RunStatus } from '../state/schema.ts'
import type { LedgerStore } from '../state/store.ts'
import { deadRunReason, RUN_HEARTBEAT_MS, runOwnerOfThisProcess } from './run-liveness.ts'

/** How a run ends. */
export type RunEnd = Exclude<RunStatus, 'running'>

export interface RunRow {
  readonly id: number
  /** Adds to the row's stats and writes them all (with a heartbeat). */
  record(more: Record<string, unknown>): Promise<void>
  /** The loader's counters (about once a second): written with the next heartbeat and at the end. */
  loaderCounters(counters: LoaderCounters): void
  /** Ends the row with its status and why (once; later calls do nothing); stops the heartbeat. */
  finish(status: RunEnd, error?: string): Promise<void>
}

/**
 * Creates the run's row (`running`, owned by `<host>/<pid>/<role>`) with `stats`, and starts its
 * heartbeat. The job row must exist (the row references it).
 */
export async function openRunRow(
  store: LedgerStore,
  jobId: string,
  mode: RunMode,
  role: string,
  stats: Record<string, unknown> = {},
): Promise<RunRow> {
  const id = await store.startRun(jobId, mode, runOwnerOfThisProcess(role))
  let recorded = stats
  let counters: LoaderCounters | undefined
  let finished = false
  const all = () => (counters !== undefined ? { ...recorded, counters } : recorded)
  if (Object.keys(stats).length > 0) {
    await store.heartbeatRun(id, all())
  }
  const beat = setInterval(() => void store.heartbeatRun(id, all()).catch(() => {}), RUN_HEARTBEAT_MS)
  return {
    id,
    async record(more) {
      recorded = { ...recorded, ...more }
      await store.heartbeatRun(id, all())
    },
    loaderCounters(c) {
      counters = c
    },
    async finish(status, error) {
      if (finished) {
        return
      }
      finished = true
      clearInterval(beat)
      await store.finishRun(id, status, all(), error)
    },
  }
}

/**
 * Writes `interrupted` into the rows of the job's dead runs, with why, so the ledger itself stops
 * calling them running. Every command that writes the ledger does this when it opens it (the
 * read-only ones only show it); the finish time recorded is the last heartbeat, the last moment
 * the process is known to have been alive.
 */
export async function markDeadRuns(store: Pick<LedgerStore, 'listRuns' | 'markRunDied'>, jobId: string, now = Date.now()): Promise<number> {
  let marked = 0
  for (const run of await store.listRuns(jobId, 1000)) {
    const reason = deadRunReason(run, now)
    if (reason === undefined) {
      continue
    }
    marked += await store.markRunDied(run.id, `the process died: ${reason}`)
  }
  return marked
}
