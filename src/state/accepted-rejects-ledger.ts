/**
 * `store.acceptedRejects`: the rejects an operator has judged (issue 28). Known-bad legacy rows (a
 * line whose room is NULL, a duplicated id) are rejected on every read; once accepted — with a
 * required reason, by whom, when (`chatferry.accepted_rejects`) — they no longer count as rejected
 * in `entityStats`, so runs and deltas exit 0 again while a new reject still makes them exit 3.
 * `rejects` lists them apart with the reason; `--withdraw` makes them open rejects again.
 */
import type { Kysely } from 'kysely'

import type { Entity } from '../target/schemas.ts'
import type { StateDatabase } from './schema.ts'
import { deleteAcceptedRejects } from './sql/delete-accepted-rejects.ts'
import { type RejectStanding } from './sql/reject-standing.ts'
import { type AcceptedRejectRow, selectAcceptedRejects } from './sql/select-accepted-rejects.ts'
import { type RejectSelection, selectRejectMatches } from './sql/select-reject-matches.ts'
import { type Acceptance, upsertAcceptedRejects } from './sql/upsert-accepted-rejects.ts'

export type { Acceptance, RejectSelection, RejectStanding }

/** One rejected item a selection named. */
export interface RejectMatch {
  readonly entity: Entity
  readonly legacyId: string
  readonly targetKey: string
  readonly code: string | null
  readonly message: string | null
  readonly standing: RejectStanding
}

/** An acceptance in force: the reject, and who accepted it, when and why. */
export interface AcceptedReject {
  readonly entity: Entity
  readonly legacyId: string
  readonly targetKey: string
  readonly code: string | null
  readonly message: string | null
  readonly reason: string
  readonly acceptedBy: string
  readonly acceptedAt: Date
}

export interface AcceptOutcome {
  /** Open rejects accepted now. */
  readonly accepted: readonly RejectMatch[]
  /** Rejects the selection named that were accepted before (left as they were). */
  readonly alreadyAccepted: number
  /** Rejects of rows a later read loaded: nothing to accept. */
  readonly superseded: number
  /** Ids of the selection that name no rejected item of the job (then nothing was accepted). */
  readonly unknownIds: readonly string[]
}

export interface AcceptedRejectsLedger {
  /**
   * Accepts the open rejects a selection names, in one transaction. With an id list, every id must
   * name a rejected item (a legacy id or a target key): otherwise nothing is accepted and the
   * unknown ids are returned.
   */
  accept(jobId: string, selection: RejectSelection, acceptance: Acceptance): Promise<AcceptOutcome>
  /** Withdraws the acceptances of the rejects a selection names; returns how many. */
  withdraw(jobId: string, selection: RejectSelection): Promise<number>
  /** The acceptances in force, oldest first. */
  list(jobId: string, filter?: { code?: string; entity?: Entity; limit?: number }): Promise<AcceptedReject[]>
}

export function createAcceptedRejectsLedger(db: Kysely<StateDatabase>): AcceptedRejectsLedger {
  return {
    accept: (jobId, selection, acceptance) =>
      db.transaction().execute(async (trx) => {
        const rows = await selectRejectMatches(trx, jobId, selection)
        const matched = new Set(rows.map((r) => r.matched_id))
        const unknownIds = [...new Set((selection.ids ?? []).map((x) => x.id).filter((id) => !matched.has(id)))]
        const count = (s: RejectStanding) => new Set(rows.filter((r) => r.standing === s).map((r) => `${r.entity}\u0000${r.target_key}`)).size
        const open = new Map(rows.filter((r) => r.standing === 'open').map((r) => [`${r.entity}\u0000${r.target_key}`, r]))
        const outcome = { alreadyAccepted: count('accepted'), superseded: count('superseded'), unknownIds }
        if (unknownIds.length > 0) {
          return { ...outcome, accepted: [] }
        }
        const items = [...open.values()].map((r) => ({ entity: r.entity, targetKey: r.target_key }))
        await upsertAcceptedRejects(trx, jobId, items, acceptance)
        return { ...outcome, accepted: [...open.values()].map(matchOf) }
      }),
    withdraw: (jobId, selection) =>
      db.transaction().execute(async (trx) => {
        const rows = (await selectRejectMatches(trx, jobId, selection)).filter((r) => r.standing === 'accepted')
        return deleteAcceptedRejects(
          trx,
          jobId,
          rows.map((r) => ({ entity: r.entity, targetKey: r.target_key })),
        )
      }),
    list: async (jobId, filter) => (await selectAcceptedRejects(db, jobId, filter)).map(acceptedOf),
  }
}

function matchOf(r: {
  entity: Entity
  legacy_id: string
  target_key: string
  code: string | null
  message: string | null
  standing: RejectStanding
}): RejectMatch {
  return { entity: r.entity, legacyId: r.legacy_id, targetKey: r.target_key, code: r.code, message: r.message, standing: r.standing }
}

function acceptedOf(r: AcceptedRejectRow): AcceptedReject {
  return {
    entity: r.entity,
    legacyId: r.legacy_id,
    targetKey: r.target_key,
    code: r.code,
    message: r.message,
    reason: r.reason,
    acceptedBy: r.accepted_by,
    acceptedAt: r.accepted_at,
  }
}
