/**
 * A kind of unit of work and a claim's arguments and result: the types the lease mechanism
 * (`lease-units.ts`) and its SQL (`sql/claim-units.ts`, `renew-units.ts`, `expire-units.ts`,
 * `select-unit-leases.ts`) share, here so that neither imports the other's file for them.
 */
import type { RawBuilder } from 'kysely'

/** A kind of unit of work: the table holding its rows and how its lease is fenced. */
export interface UnitKind {
  /** The ledger table (`chatferry.<table>`): it has `id`, `job_id`, `status`, `lease_owner`, `lease_expires_at`. */
  readonly table: 'batches' | 'updates'
  /** The statuses in which a unit waits for (or is under) a lease; any other status is finished. */
  readonly open: readonly string[]
  /**
   * `token`: each claim writes a fresh `lease_token` (uuid) and every fenced write presents it (a
   * holder whose lease was taken over, even by its own process, can record nothing). `owner`: the
   * holder's id (`host/pid/uuid`, unique per process) is the fence.
   */
  readonly fence: 'token' | 'owner'
  /** The table counts claims in a `claims` column. */
  readonly countsClaims: boolean
  /** How long a unit handed back waits before it can be claimed again. */
  readonly retryDelaySeconds: number
}

/** A unit just claimed: its id, its lease's fence (the token, or the owner) and the kind's extra columns. */
export type ClaimedUnit<R> = R & { readonly id: number; readonly fence: string }

export interface ClaimArgs {
  readonly jobId: string
  /** The claiming process (`host/pid/uuid`): the takeover reads its host and PID. */
  readonly owner: string
  readonly leaseSeconds: number
  readonly limit: number
  /** More conditions a unit must meet (SQL over the candidate row `c`), e.g. the update lane's item order. */
  readonly eligible?: RawBuilder<unknown>
  /** More columns to return (SQL over the claimed row `u`). */
  readonly returning?: RawBuilder<unknown>
}
