import { type Kysely, sql } from 'kysely'

import { storableText } from '../safe-text.ts'
import type { StateDatabase } from '../schema.ts'

/** One row of `chatferry.platform_events`: an item a delivery said was changed, and who changed it. */
export interface PlatformEventRow {
  readonly entity: 'groups' | 'members' | 'messages'
  readonly platformKey: string
  readonly changedAt: Date | null
  /** The state after the change (JSON text). */
  readonly state: string
  readonly origin: 'platform' | 'chatferry'
}

/** How long after a delivery the same content is a redelivery (the documented retries end 40 s after the first attempt). */
export const REDELIVERY_WINDOW_SECONDS = 600

/**
 * Stores one delivery's rows unless a delivery with the same hash was stored in the last
 * {@link REDELIVERY_WINDOW_SECONDS} (a retry of one the receiver already took): deliveries carry no
 * id, and the same content much later is a new change (a member added, kicked and added again).
 * Serialised per hash by an advisory lock of the caller's transaction, so two copies arriving
 * together are stored once. Returns how many rows were stored (0: a redelivery).
 */
export async function insertPlatformEvents(
  db: Kysely<StateDatabase>,
  args: { jobId: string; eventHash: string; trigger: string; webhookId: string; rows: readonly PlatformEventRow[] },
): Promise<number> {
  await sql`select pg_advisory_xact_lock(hashtext(${`chatferry.platform_events:${args.jobId}:${args.eventHash}`}))`.execute(db)
  const seen = await sql<{ one: number }>`
    select 1 as one from chatferry.platform_events
    where job_id = ${args.jobId} and event_hash = ${args.eventHash}
      and received_at > now() - ${REDELIVERY_WINDOW_SECONDS} * interval '1 second'
    limit 1`.execute(db)
  if (seen.rows.length > 0 || args.rows.length === 0) {
    return 0
  }
  const rows = args.rows
  const r = await sql`
    insert into chatferry.platform_events (job_id, event_hash, trigger, webhook_id, entity, platform_key, changed_at, state, origin)
    select ${args.jobId}, ${args.eventHash}, ${args.trigger}, ${storableText(args.webhookId)}, t.e, t.k, t.c, t.s, t.o
    from unnest(${rows.map((x) => x.entity)}::text[], ${rows.map((x) => storableText(x.platformKey))}::text[],
      ${rows.map((x) => x.changedAt?.toISOString() ?? null)}::timestamptz[], ${rows.map((x) => storableText(x.state))}::text[],
      ${rows.map((x) => x.origin)}::text[]) as t(e, k, c, s, o)`.execute(db)
  return Number(r.numAffectedRows ?? rows.length)
}
