/**
 * The loader's view of the ledger's batches and items: pack planned items into batches, claim
 * batches under a fenced lease, settle, split or release them, take over dead holders' leases.
 * Every statement lives in `sql/`, one file each. A batch is a unit of work of `lease-units.ts`
 * ({@link BATCH_UNITS}): claimed, renewed, fenced and taken over there, and by nothing else.
 */
import type { Kysely } from 'kysely'

import type { Entity } from '../target/schemas.ts'
import { BATCH_UNITS, unitLeases } from './lease-units.ts'
import type { StateDatabase } from './schema.ts'
import { sendablePayloads, type TextLinkCounts } from './sendable-messages.ts'
import { assignItems } from './sql/assign-items.ts'
import { claimBatches } from './sql/claim-batches.ts'
import { countOpenBatches } from './sql/count-open-batches.ts'
import { type BatchReport, fenceBatch } from './sql/fence-batch.ts'
import { findUnfinishedItem } from './sql/find-unfinished-item.ts'
import { insertBatches } from './sql/insert-batches.ts'
import { insertSplitBatch } from './sql/insert-split-batch.ts'
import { lockJob } from './sql/lock-job.ts'
import { moveItems } from './sql/move-items.ts'
import { rejectBatchItems } from './sql/reject-batch-items.ts'
import { replanBatchItems } from './sql/replan-batch-items.ts'
import { selectBatchItems } from './sql/select-batch-items.ts'
import { selectCurrentEntity } from './sql/select-current-entity.ts'
import { selectPlannedItems } from './sql/select-planned-items.ts'
import { type BatchSettlement, type ItemSettlement, settleBatches } from './sql/settle-batches.ts'
import { settleLandedItems } from './sql/settle-landed-items.ts'
import { skipAgedOutItems } from './sql/skip-aged-out-items.ts'

export type { BatchReport, BatchSettlement, ItemSettlement }

/** One item of a claimed batch. */
export interface BatchItem {
  /** The ledger row id. */
  readonly id: number
  readonly key: string
  /** The import item's JSON text, sent as is. */
  readonly payload: string
  readonly hash: string | null
}

/** A batch claimed under a fresh lease token, with its items still `sent`. */
export interface ClaimedBatch {
  readonly id: number
  readonly token: string
  readonly entity: Entity
  /** How long ago its parent was split (ms), for a split half. */
  readonly parentSplitAgeMs: number | undefined
  /** The error code recorded on its parent when it was split (the loader's bad-row isolation marks its batches so). */
  readonly parentCode: string | undefined
  /** The local clock when the claim statement returned (the lease runs from about then). */
  readonly claimedAt: number
  readonly items: BatchItem[]
  /** What `files.rewriteTextLinks` did to its messages (zeros when off). */
  readonly textLinks: TextLinkCounts
}

/**
 * Messages to settle at pack time rather than send: those whose `sentAt` (epoch seconds) is before
 * `sentBefore` are skipped with `reason` (the loader's retention decision, src/load/retention-at-pack.ts).
 */
export interface AgeOutRule {
  readonly sentBefore: number
  readonly reason: string
}

/** What one packing did. */
export interface PackResult {
  /** Batches packed. */
  readonly batches: number
  /** Messages skipped at pack time as aged out of the retention window. */
  readonly agedOut: number
}

export interface BatchLedger {
  /**
   * Packs planned items of the current entity into full batches (≤ `itemsPerRequest` items) until
   * `depth` batches are open, and marks the items `sent`, in one transaction: the new batches are
   * claimable at once. With `ageOut`, messages it would pack that aged out of
   * the retention window are skipped instead, in the same transaction. Returns how many batches it
   * packed (0 when another process is packing this job right now) and how many messages it skipped.
   */
  pack(jobId: string, limits: { depth: number; itemsPerRequest: number; ageOut?: AgeOutRule }): Promise<PackResult>
  /**
   * Claims up to `limit` open batches without a live lease, oldest first, with fresh lease tokens
   * (two statements for all of them: the claim, `lease-units.ts`, and their items). Messages are
   * sent with their files (`sendable-messages.ts`); `rewriteTextLinks` (`files.rewriteTextLinks`)
   * also rewrites the links to copied files their texts name.
   */
  claim(args: { jobId: string; owner: string; leaseSeconds: number; limit: number; rewriteTextLinks?: boolean }): Promise<ClaimedBatch[]>
  /** Settles answered batches in one transaction, each fenced by its token and lease. Returns the ids settled. */
  settle(jobId: string, group: readonly BatchSettlement[]): Promise<Set<number>>
  /**
   * Fenced: splits a failing batch in halves (new open batches holding its items), or, for a
   * single item, rejects it. Returns false when fenced out.
   */
  split(
    jobId: string,
    batch: { report: BatchReport; entity: Entity; keys: readonly string[] },
    error: { code: string; message: string },
  ): Promise<boolean>
  /**
   * Fenced: finishes a failed message batch the loader read back (src/load/isolate-rows.ts), in one
   * transaction: the rows found on the platform become `done/created`; each key of `alone` moves
   * into a new open batch of its own (pointing at this one, which is marked `split` with `error`);
   * the keys of `together` (when any) move into one new batch; the keys of `again` are planned
   * again. Returns false when fenced out (then nothing was written).
   */
  isolate(
    jobId: string,
    batch: { report: BatchReport; entity: Entity },
    rows: { landed: readonly ItemSettlement[]; alone: readonly string[]; together: readonly string[]; again: readonly string[] },
    error: { code: string; message: string },
  ): Promise<boolean>
  /**
   * Fenced: hands a batch back (open, lease ended, its items stay `sent`), recording the error; it
   * can be claimed again after `BATCH_UNITS.retryDelaySeconds`.
   */
  release(report: BatchReport, error: { code: string; message: string }): Promise<boolean>
  /** Fenced: settles a batch with no item left in it. */
  finishEmpty(report: BatchReport): Promise<boolean>
  /**
   * Renews the unexpired leases held under these tokens for `leaseSeconds`. Returns the ids
   * renewed; a batch absent from them has lost its lease.
   */
  renew(leases: readonly { batchId: number; token: string }[], leaseSeconds: number): Promise<Set<number>>
  /** Open batches under an unexpired lease, with their holder. */
  leased(jobId: string): Promise<{ id: number; leaseOwner: string }[]>
  /** Ends these leases now (their holder is dead). */
  expireLeases(batchIds: readonly number[]): Promise<void>
  /** True when no item of the job is planned or in flight. */
  drained(jobId: string): Promise<boolean>
}

export function createBatchLedger(db: Kysely<StateDatabase>): BatchLedger {
  const leases = unitLeases(db, BATCH_UNITS)
  /** Runs `fn` in a transaction that commits only if the claim still holds its lease. */
  function fenced(report: BatchReport, update: Parameters<typeof fenceBatch>[2], fn: (trx: Kysely<StateDatabase>) => Promise<void>) {
    return db.transaction().execute(async (trx) => {
      if (!(await fenceBatch(trx, report, update))) {
        return false
      }
      await fn(trx)
      return true
    })
  }

  return {
    pack: (jobId, limits) =>
      db.transaction().execute(async (trx) => {
        const none: PackResult = { batches: 0, agedOut: 0 }
        if (!(await lockJob(trx, jobId))) {
          return none
        }
        const want = limits.depth - (await countOpenBatches(trx, jobId))
        if (want <= 0) {
          return none
        }
        const entity = await selectCurrentEntity(trx, jobId)
        if (entity === undefined) {
          return none
        }
        const ipr = limits.itemsPerRequest
        let planned = await selectPlannedItems(trx, jobId, entity, want * ipr)
        let agedOut = 0
        const rule = entity === 'messages' ? limits.ageOut : undefined
        // Messages drain oldest first, so the aged-out ones are at the head: skip them and look
        // again until what would be packed is all inside the window. A message's sort key is its
        // `sentAt`, written with its payload, so only those keyed before the cut are read (their
        // payload decides): packing a window of fresh messages reads no payload at all.
        while (rule !== undefined) {
          const old = planned.filter((p) => p.sortKey < rule.sentBefore).map((p) => p.id)
          const skipped = old.length === 0 ? [] : await skipAgedOutItems(trx, { ids: old, sentBefore: rule.sentBefore, reason: rule.reason })
          if (skipped.length === 0) {
            break
          }
          agedOut += skipped.length
          planned = await selectPlannedItems(trx, jobId, entity, want * ipr)
        }
        const ids = planned.map((p) => p.id)
        if (ids.length === 0) {
          return { batches: 0, agedOut }
        }
        const sizes: number[] = []
        for (let i = 0; i < ids.length; i += ipr) {
          sizes.push(Math.min(ipr, ids.length - i))
        }
        const batchIds = await insertBatches(trx, jobId, entity, sizes)
        await assignItems(
          trx,
          ids,
          ids.map((_, i) => batchIds[Math.floor(i / ipr)] as number),
        )
        return { batches: batchIds.length, agedOut }
      }),

    async claim(args) {
      const rows = await claimBatches(db, args)
      const claimedAt = Date.now()
      if (rows.length === 0) {
        return []
      }
      const items = await selectBatchItems(
        db,
        rows.map((r) => r.id),
      )
      const rewrite = args.rewriteTextLinks === true
      const sendable = await sendablePayloads(db, { jobId: args.jobId, rewriteTextLinks: rewrite }, rows, items)
      const claims = new Map<number, ClaimedBatch>(
        rows.map((r) => [r.id, { ...r, claimedAt, items: [], textLinks: sendable.textLinks.get(r.id) ?? { rewritten: 0, overLimit: 0 } }]),
      )
      for (const i of items) {
        claims.get(i.batchId)?.items.push({ id: i.id, key: i.key, payload: sendable.payloads.get(i.id) ?? i.payload, hash: i.hash })
      }
      return [...claims.values()]
    },

    settle: (jobId, group) => db.transaction().execute((trx) => settleBatches(trx, jobId, group)),

    split: (jobId, batch, error) =>
      fenced(batch.report, { status: 'split', errorCode: error.code, errorMessage: error.message }, async (trx) => {
        const from = batch.report.batchId
        if (batch.keys.length <= 1) {
          await rejectBatchItems(trx, from, error.code, error.message)
        } else {
          const half = Math.ceil(batch.keys.length / 2)
          for (const keys of [batch.keys.slice(0, half), batch.keys.slice(half)]) {
            const id = await insertSplitBatch(trx, { jobId, entity: batch.entity, itemCount: keys.length, parentId: from })
            await moveItems(trx, { jobId, entity: batch.entity, keys, fromBatch: from, toBatch: id })
          }
        }
      }),

    isolate: (jobId, batch, rows, error) =>
      fenced(batch.report, { status: 'split', errorCode: error.code, errorMessage: error.message }, async (trx) => {
        const from = batch.report.batchId
        const landed = rows.landed.map((i) => ({ id: i.id, hash: i.hash, platformId: i.platformId ?? null }))
        await settleLandedItems(trx, { jobId, fromBatch: from, items: landed })
        const groups = [...rows.alone.map((key) => [key]), ...(rows.together.length > 0 ? [rows.together] : [])]
        for (const keys of groups) {
          const id = await insertSplitBatch(trx, { jobId, entity: batch.entity, itemCount: keys.length, parentId: from })
          await moveItems(trx, { jobId, entity: batch.entity, keys, fromBatch: from, toBatch: id })
        }
        await replanBatchItems(trx, { jobId, entity: batch.entity, keys: rows.again, fromBatch: from })
      }),

    release: (report, error) =>
      fenced(
        report,
        { status: 'open', errorCode: error.code, errorMessage: error.message, retryDelaySeconds: BATCH_UNITS.retryDelaySeconds },
        async () => {},
      ),

    finishEmpty: (report) => fenced(report, { status: 'settled' }, async () => {}),

    renew: async (held, leaseSeconds) =>
      new Set(
        await leases.renew(
          held.map((l) => ({ id: l.batchId, fence: l.token })),
          leaseSeconds,
        ),
      ),
    leased: (jobId) => leases.leased(jobId),
    expireLeases: (batchIds) => leases.expire(batchIds),

    drained: async (jobId) => !(await findUnfinishedItem(db, jobId)),
  }
}
