/**
 * The update lane's view of `chatferry.updates` (`store.updateLane`): claim planned updates of a
 * job under a lease, record each call as `sent` before it goes out, settle it from the answer
 * (done / rejected / handed back), take over the leases of dead holders, and record the platform
 * ids of messages the lane found. The lane itself is `src/load/update-lane.ts`; every statement is
 * one file in `sql/`. An update is a unit of work of `lease-units.ts` ({@link UPDATE_UNITS}):
 * claimed and taken over there, fenced by its holder's id.
 *
 * Crash safety rests on two rules here: an update is `sent` (fenced by its holder's lease) before
 * its call, and one found `sent` with an expired lease is handed to the next holder *as such*, so
 * it checks the platform's state before sending again (src/load/check-ambiguous-update.ts).
 */
import type { Kysely } from 'kysely'

import { unitLeases, UPDATE_UNITS } from './lease-units.ts'
import type { StateDatabase } from './schema.ts'
import { type ClaimedUpdateRow, claimUpdates } from './sql/claim-updates.ts'
import { findOpenUpdate } from './sql/find-open-update.ts'
import { markUpdateSent } from './sql/mark-update-sent.ts'
import { rejectUpdate } from './sql/reject-update.ts'
import { releaseUpdate } from './sql/release-update.ts'
import { replanRejectedUpdates } from './sql/replan-rejected-updates.ts'
import { type PlatformConflictRow, selectPlatformConflicts } from './sql/select-platform-conflicts.ts'
import { selectUpdateRejects, type UpdateRejectRow } from './sql/select-update-rejects.ts'
import { settleUpdateDone } from './sql/settle-update-done.ts'
import { updateItemPlatformId } from './sql/update-item-platform-id.ts'
import { updateLoadedHash } from './sql/update-loaded-hash.ts'

export type { ClaimedUpdateRow as ClaimedUpdate, UpdateRejectRow as UpdateReject }

/** Why an update goes back: its error, and whether its call may have reached the platform. */
export interface UpdateHandBack {
  /** The call may have been applied (timeout, 5xx, lost connection): the next holder checks first. */
  readonly ambiguous: boolean
  /** False when nothing was tried (stopped before the call). */
  readonly countAttempt: boolean
  readonly code: string | null
  readonly message: string | null
  readonly httpStatus: number | null
}

export interface UpdateLaneLedger {
  /**
   * Claims up to `limit` updates (planned, or sent with an expired lease) oldest first under
   * `owner`'s lease; an item's updates come one at a time, in order, across processes.
   */
  claim(args: { jobId: string; owner: string; leaseSeconds: number; limit: number }): Promise<ClaimedUpdate[]>
  /** `sent` before the call, with a fresh lease; false when the lease was lost (do not send). */
  markSent(id: number, owner: string, leaseSeconds: number): Promise<boolean>
  /**
   * Settles `done` (`httpStatus` null: no call was needed) and, when every update bringing the
   * item to its payload hash is done, records that hash as the item's `loaded_hash`, in one
   * transaction. False when the lease was lost.
   */
  done(id: number, owner: string, httpStatus: number | null): Promise<boolean>
  /** Rejects with the platform's code and reason; false when the lease was lost. */
  reject(id: number, owner: string, error: { code: string; message: string; httpStatus: number | null }): Promise<boolean>
  /** Settles as `reported`: a change the platform cannot take, kept with its reason (not a rejection); false when the lease was lost. */
  report(id: number, owner: string, error: { code: string; message: string; httpStatus: number | null }): Promise<boolean>
  /**
   * Settles as `conflict` (`changes.conflicts: report`) or `dropped` (`platform-wins`): its item
   * changed on the platform after chatferry last wrote it; nothing is sent. False when the lease was lost.
   */
  holdBack(id: number, owner: string, as: 'conflict' | 'dropped', message: string): Promise<boolean>
  /** Which of these items changed on the platform after chatferry last wrote them (the receiver's events). */
  platformConflict(jobId: string, entity: string, targetKey: string): Promise<PlatformConflictRow | undefined>
  /** Hands an update back (see {@link UpdateHandBack}); false when the lease was lost. */
  release(id: number, owner: string, why: UpdateHandBack): Promise<boolean>
  /** Updates under an unexpired lease, with their holder. */
  leased(jobId: string): Promise<{ id: number; leaseOwner: string }[]>
  /** Ends these leases now (their holder is dead). */
  expireLeases(ids: readonly number[]): Promise<void>
  /** True when no update of the job is planned or sent. */
  drained(jobId: string): Promise<boolean>
  /** Records the platform id of a loaded item (a message the lane found on the platform). */
  recordPlatformId(jobId: string, entity: string, targetKey: string, platformId: string): Promise<void>
  /** Rejected updates (legacy id, target key, kind, code, reason), oldest first. */
  rejects(jobId: string, filter?: { code?: string; entity?: string; limit?: number }): Promise<UpdateReject[]>
  /** Plans rejected updates (`held: 'conflict'`: those held back by a conflict) again (`chatferry retry-rejected`); returns how many. */
  retryRejected(jobId: string, filter?: { code?: string; entity?: string; held?: 'rejected' | 'conflict' }): Promise<number>
}

type ClaimedUpdate = ClaimedUpdateRow
type UpdateReject = UpdateRejectRow

export function createUpdateLaneLedger(db: Kysely<StateDatabase>): UpdateLaneLedger {
  const leases = unitLeases(db, UPDATE_UNITS)
  return {
    claim: (args) => claimUpdates(db, args),
    markSent: (id, owner, leaseSeconds) => markUpdateSent(db, { id, owner, leaseSeconds }),
    done: (id, owner, httpStatus) =>
      db.transaction().execute(async (trx) => {
        const settled = await settleUpdateDone(trx, { id, owner, httpStatus })
        if (settled === undefined) {
          return false
        }
        if (settled.payloadHash !== null) {
          await updateLoadedHash(trx, { ...settled, hash: settled.payloadHash })
        }
        return true
      }),
    reject: (id, owner, error) => rejectUpdate(db, { id, owner, ...error }),
    report: (id, owner, error) => rejectUpdate(db, { id, owner, ...error, as: 'reported' }),
    holdBack: (id, owner, as, message) => rejectUpdate(db, { id, owner, code: 'CHANGED_ON_PLATFORM', message, httpStatus: null, as }),
    platformConflict: async (jobId, entity, targetKey) => (await selectPlatformConflicts(db, jobId, entity, [targetKey]))[0],
    release: (id, owner, why) => releaseUpdate(db, { id, owner, ...why }),
    leased: (jobId) => leases.leased(jobId),
    expireLeases: (ids) => leases.expire(ids),
    drained: async (jobId) => !(await findOpenUpdate(db, jobId)),
    recordPlatformId: (jobId, entity, targetKey, platformId) => updateItemPlatformId(db, { jobId, entity, targetKey, platformId }),
    rejects: (jobId, filter = {}) => selectUpdateRejects(db, jobId, filter),
    retryRejected: (jobId, filter = {}) => replanRejectedUpdates(db, jobId, filter),
  }
}
