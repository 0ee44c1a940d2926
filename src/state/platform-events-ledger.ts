/**
 * `store.platformEvents`: changes made on the platform, as webhook deliveries report them (issue
 * 15). The receiver (`chatferry webhooks receive`) records each validated delivery once — the
 * items it names, each marked `platform` or `chatferry` (the echo of chatferry's own write:
 * platform-event-origin.ts) — and keeps its registration here; planning and the update lane ask
 * which items changed on the platform after chatferry last wrote them (`conflicts`), and `status`
 * lists the updates held back for it. The only owner of `chatferry.platform_events` and
 * `chatferry.webhook_receivers`.
 */
import type { Kysely } from 'kysely'

import type { PlatformChange } from '../target/webhook-changes.ts'
import { originOf, ownWritesOf } from './platform-event-origin.ts'
import type { StateDatabase } from './schema.ts'
import { insertPlatformEvents, type PlatformEventRow } from './sql/insert-platform-events.ts'
import { selectOwnWrites } from './sql/select-own-writes.ts'
import { type PlatformConflictRow, selectPlatformConflicts } from './sql/select-platform-conflicts.ts'
import { selectUpdateConflicts, type UpdateConflictRow } from './sql/select-update-conflicts.ts'
import { selectWebhookReceiver, type WebhookReceiverRow } from './sql/select-webhook-receiver.ts'
import { upsertWebhookReceiver } from './sql/upsert-webhook-receiver.ts'

export type { PlatformConflictRow as PlatformConflict, UpdateConflictRow as UpdateConflict, WebhookReceiverRow as WebhookReceiver }

/** One validated delivery. */
export interface PlatformDelivery {
  /** `envelopeHash` of the envelope: a redelivery has the same one. */
  readonly eventHash: string
  readonly trigger: string
  readonly webhookId: string
  readonly changes: readonly PlatformChange[]
}

/** What recording a delivery did. */
export interface RecordedDelivery {
  /** Rows stored (0 for a redelivery). */
  readonly stored: number
  /** Of those, changes made on the platform (not chatferry's echo). */
  readonly platform: number
  /** The same delivery was stored already. */
  readonly redelivery: boolean
}

export interface PlatformEventsLedger {
  /** Records a delivery's items once, each with its origin (one transaction). */
  record(jobId: string, delivery: PlatformDelivery): Promise<RecordedDelivery>
  /** Which of these done items changed on the platform after chatferry last wrote them (see select-platform-conflicts.ts). */
  conflicts(jobId: string, entity: string, targetKeys: readonly string[]): Promise<PlatformConflictRow[]>
  /** Updates held back because their item changed on the platform, oldest first. */
  heldBack(jobId: string, args: { limit: number; withDropped: boolean }): Promise<UpdateConflictRow[]>
  /** The job's receiver registration. */
  receiver(jobId: string): Promise<WebhookReceiverRow | undefined>
  /** Records the job's receiver registration (the password only as its hash). */
  saveReceiver(jobId: string, row: WebhookReceiverRow): Promise<void>
}

async function recordDelivery(db: Kysely<StateDatabase>, jobId: string, d: PlatformDelivery): Promise<RecordedDelivery> {
  return db.transaction().execute(async (trx) => {
    const rows: PlatformEventRow[] = []
    for (const entity of ['groups', 'members', 'messages'] as const) {
      const mine = d.changes.filter((c) => c.entity === entity)
      const own = new Map((await selectOwnWrites(trx, jobId, entity, [...new Set(mine.map((c) => c.platformKey))])).map((r) => [r.platformKey, r]))
      for (const c of mine) {
        const writes = own.get(c.platformKey)
        const origin = originOf(d.trigger, c.state, writes === undefined ? undefined : ownWritesOf(writes))
        rows.push({ entity, platformKey: c.platformKey, changedAt: c.changedAt, state: JSON.stringify(c.state), origin })
      }
    }
    const stored = await insertPlatformEvents(trx, { jobId, eventHash: d.eventHash, trigger: d.trigger, webhookId: d.webhookId, rows })
    return { stored, platform: stored === 0 ? 0 : rows.filter((r) => r.origin === 'platform').length, redelivery: stored === 0 && rows.length > 0 }
  })
}

export function createPlatformEventsLedger(db: Kysely<StateDatabase>): PlatformEventsLedger {
  return {
    record: (jobId, delivery) => recordDelivery(db, jobId, delivery),
    conflicts: (jobId, entity, targetKeys) => selectPlatformConflicts(db, jobId, entity, targetKeys),
    heldBack: (jobId, args) => selectUpdateConflicts(db, jobId, args),
    receiver: (jobId) => selectWebhookReceiver(db, jobId),
    saveReceiver: (jobId, row) => upsertWebhookReceiver(db, jobId, row),
  }
}
