/**
 * **A unit of work is claimed here.** One lease mechanism for every lane of the loader: an import
 * batch (`chatferry.batches`), an update intent (`chatferry.updates`), and whatever lane comes next
 * (the files lane adds a {@link UnitKind} for its table). A unit is a ledger row with
 * `lease_owner` and `lease_expires_at` (and `lease_token` for kinds fenced by token); Postgres is
 * the queue, as in graphile-worker:
 *
 * - **claim** (`sql/claim-units.ts`): one statement takes up to `limit` claimable units of a job,
 *   oldest first, skipping rows another process is claiming (`for update … skip locked`). A unit
 *   is claimable when its status is one of the kind's `open` statuses and it has no live lease
 *   (none, or expired). The claim writes the new holder, a lease of `leaseSeconds` and, fenced by
 *   token, a fresh `lease_token`: whoever held the unit before is fenced out from then on.
 * - **renew** (`sql/renew-units.ts`): extends the leases still held (same token or owner, not
 *   expired); a lapsed lease is never revived: another process may hold the unit by now.
 * - **fence**: every write that records a unit's outcome checks the lease in its own `where`
 *   (`lease_token = $token and lease_expires_at > now()` for batches, `sql/fence-batch.ts` and
 *   `sql/settle-batches.ts`; `lease_owner = $owner and lease_expires_at > now()` for updates,
 *   `sql/mark-update-sent.ts`, `settle-update-done.ts`, `reject-update.ts`, `release-update.ts`),
 *   and records nothing when the lease is gone.
 * - **release**: a unit handed back keeps its open status with its lease ended (a batch comes back
 *   after {@link UnitKind.retryDelaySeconds}); settling it moves it out of the `open` statuses.
 * - **takeover** (`sql/select-unit-leases.ts`, `sql/expire-units.ts`): a dead holder's units come
 *   back when their lease expires, at once when the holder ran on this host and its PID is gone
 *   (`src/load/take-over-dead-leases.ts`, `src/load/update-lane.ts`).
 *
 * Nothing else leases a unit: pg-boss serves only the job schedules (`src/job/schedule-boss.ts`).
 */
import type { Kysely } from 'kysely'

import type { StateDatabase } from './schema.ts'
import { claimUnits } from './sql/claim-units.ts'
import { expireUnits } from './sql/expire-units.ts'
import { renewUnits } from './sql/renew-units.ts'
import { selectUnitLeases } from './sql/select-unit-leases.ts'
import type { ClaimArgs, ClaimedUnit, UnitKind } from './unit-kind.ts'

/** An import batch: one request of up to `itemsPerRequest` items (`store.batches`). */
export const BATCH_UNITS: UnitKind = { table: 'batches', open: ['open'], fence: 'token', countsClaims: true, retryDelaySeconds: 1 }

/**
 * An update intent (`store.updateLane`): `planned`, or `sent` whose lease expired (its call may have
 * reached the platform; the next holder checks first).
 */
export const UPDATE_UNITS: UnitKind = { table: 'updates', open: ['planned', 'sent'], fence: 'owner', countsClaims: false, retryDelaySeconds: 0 }

/** The lease operations of one kind of unit, over the ledger. */
export interface UnitLeases<R> {
  /** Claims up to `limit` claimable units of the job, oldest first, in one statement. */
  claim(args: ClaimArgs): Promise<ClaimedUnit<R>[]>
  /** Renews the live leases among these (by fence); returns the ids renewed. */
  renew(units: readonly { id: number; fence: string }[], leaseSeconds: number): Promise<number[]>
  /** Units of the job under a live lease, with their holder. */
  leased(jobId: string): Promise<{ id: number; leaseOwner: string }[]>
  /** Ends these leases now (their holder is dead): claimable at once, a dead holder's fenced writes record nothing. */
  expire(ids: readonly number[]): Promise<void>
}

export function unitLeases<R = object>(db: Kysely<StateDatabase>, kind: UnitKind): UnitLeases<R> {
  return {
    claim: (args) => claimUnits<R>(db, kind, args),
    renew: (units, leaseSeconds) => (units.length === 0 ? Promise.resolve([]) : renewUnits(db, kind, units, leaseSeconds)),
    leased: (jobId) => selectUnitLeases(db, kind, jobId),
    expire: (ids) => (ids.length === 0 ? Promise.resolve() : expireUnits(db, kind, ids)),
  }
}
