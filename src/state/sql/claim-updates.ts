import { type Kysely, sql } from 'kysely'

import { UPDATE_UNITS } from '../lease-units.ts'
import type { StateDatabase } from '../schema.ts'
import { claimUnits } from './claim-units.ts'

/** An update row as the lane holds it, with the platform id of its item (messages). */
export interface ClaimedUpdateRow {
  readonly id: number
  readonly entity: string
  readonly kind: string
  readonly legacyId: string
  readonly targetKey: string
  /** The desired state, JSON text (the call's body). */
  readonly body: string
  readonly payloadHash: string | null
  readonly attempts: number
  /** `planned`, or `sent` when it was sent before and its lease expired: its fate is unknown. */
  readonly status: 'planned' | 'sent'
  /** `items.platform_id` of the update's item (a message's id on the platform), when recorded. */
  readonly platformId: string | null
  /** The item's stored payload, for a message without a platform id (the lane looks it up by it); else null. */
  readonly itemPayload: string | null
}

/**
 * Claims up to `limit` updates of the job under a lease of `owner`, oldest first (`claimUnits` of
 * {@link UPDATE_UNITS}, `../lease-units.ts`): those `planned` and those `sent` whose lease expired
 * (a holder died between sending and settling: the lane checks them against the platform before
 * sending anything). Rows another process locks are skipped, and an update waits while an older
 * update of the same item is planned or sent, so one item's updates reach the platform in the order
 * they were planned, across every process. A user's deactivation also waits for the planned updates
 * of that user's memberships (a kick, a ban) and of the messages it sent (edits and deletes on its
 * behalf): the platform answers `ERR_UID_NOT_FOUND` for a deactivated user in those calls. The
 * claim changes only the lease; `markUpdateSent` records the send.
 */
export async function claimUpdates(
  db: Kysely<StateDatabase>,
  args: { jobId: string; owner: string; leaseSeconds: number; limit: number },
): Promise<ClaimedUpdateRow[]> {
  const rows = await claimUnits<{
    entity: string
    kind: string
    legacy_id: string
    target_key: string
    body: string
    payload_hash: string | null
    attempts: number
    status: 'planned' | 'sent'
    platform_id: string | null
    item_payload: string | null
  }>(db, UPDATE_UNITS, {
    ...args,
    eligible: sql`not exists (
          select 1 from chatferry.updates e
          where e.job_id = c.job_id and e.entity = c.entity and e.target_key = c.target_key
            and e.id < c.id and e.status in ('planned', 'sent'))
        and not (c.kind = 'user.deactivate' and exists (
          select 1 from chatferry.updates m
          where m.job_id = c.job_id and m.status in ('planned', 'sent') and (
            (m.entity = 'members' and right(m.target_key, length(c.target_key) + 8) = '_member_' || c.target_key)
            or (m.entity = 'messages' and m.body::jsonb ->> 'sender' = c.target_key))))`,
    returning: sql`u.entity, u.kind, u.legacy_id, u.target_key, u.body, u.payload_hash, u.attempts, u.status,
      (select i.platform_id from chatferry.items i
       where i.job_id = u.job_id and i.entity = u.entity and i.target_key = u.target_key) as platform_id,
      (select i.payload from chatferry.items i
       where i.job_id = u.job_id and i.entity = u.entity and i.target_key = u.target_key
         and i.platform_id is null and u.entity = 'messages') as item_payload`,
  })
  return rows.map((row) => ({
    id: row.id,
    entity: row.entity,
    kind: row.kind,
    legacyId: row.legacy_id,
    targetKey: row.target_key,
    body: row.body,
    payloadHash: row.payload_hash,
    attempts: row.attempts,
    status: row.status,
    platformId: row.platform_id,
    itemPayload: row.item_payload,
  }))
}
