/**
 * Everything `status` and the dashboard read from the ledger for one job, read in one go: the
 * jobs, the counts per entity, the last runs, the open messages per minute (the retention edge),
 * the update intents and the updates held back, the files lane, and (the dashboard) the rejected
 * items. Read on any store: a Postgres ledger, an embedded store this process holds, or — while a
 * run holds the embedded store — by that run for the asker (status-socket.ts).
 * status-snapshot.ts turns the readings into what is printed.
 */
import type { FileCounts, UpdateConflict, UpdateCountRow } from '../state/index.ts'
import type { EntityStats, LedgerStore, RejectRecord, RunRecord } from '../state/store.ts'

/** Which job, how many of its last runs, how many of its rejected items (0: none). */
export interface StatusRequest {
  readonly jobId: string
  readonly runs: number
  readonly rejects: number
}

export interface StatusReadings {
  readonly jobs: { id: string; appId: string }[]
  readonly entityStats: EntityStats[]
  /** Newest first. */
  readonly runs: RunRecord[]
  /** Messages still to send, per minute of `sentAt`. */
  readonly openMessagesPerMinute: [number, number][]
  readonly updateCounts: UpdateCountRow[]
  /** The first {@link CONFLICTS_LISTED} updates held back (`conflict`); none read when there are none. */
  readonly updateConflicts: UpdateConflict[]
  readonly fileCounts: FileCounts
  readonly rejects: RejectRecord[]
}

/** How many held-back updates `status` lists (all of them are counted). */
export const CONFLICTS_LISTED = 50

export async function readStatus(store: LedgerStore, req: StatusRequest): Promise<StatusReadings> {
  const { jobId } = req
  const updateCounts = await store.updatePlan.counts(jobId)
  return {
    jobs: await store.listJobs(),
    entityStats: await store.entityStats(jobId),
    runs: await store.listRuns(jobId, req.runs),
    openMessagesPerMinute: await store.statusLookups.openMessagesPerMinute(jobId),
    updateCounts,
    updateConflicts: updateCounts.some((r) => r.status === 'conflict')
      ? await store.platformEvents.heldBack(jobId, { limit: CONFLICTS_LISTED, withDropped: false })
      : [],
    fileCounts: await store.files.counts(jobId),
    rejects: req.rejects > 0 ? await store.listRejects(jobId, { limit: req.rejects }) : [],
  }
}
