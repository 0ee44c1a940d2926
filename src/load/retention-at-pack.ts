/**
 * Retention, checked again when a batch is packed. Planning judges each message against the
 * retention window once (mappings/message-retention.ts), but a load can run for days: a message
 * planned just inside the window can age out before it is sent, and on the platform such a row
 * fails its whole request (HTTP 500 after the good rows landed, facts i12 §1). So the packer
 * settles messages that aged out since planning by the same policy, without sending them:
 *
 * - `retention.oldMessages: skip` (the default): skipped, with the policy's reason;
 * - `retention.oldMessages: send` (the app has extended retention): sent, as at planning.
 *
 * "Aged out" counts `load.retentionMarginMs` ahead of the loader's clock: a batch packed now may
 * be sent a little later (the queue ahead of the senders, retries), and a row that crosses the
 * edge on the way fails its request just the same. The SQL: src/state/sql/skip-aged-out-items.ts.
 */
import type { AgeOutRule } from '../state/batch-ledger.ts'

const DAY_MS = 86_400_000

/** The retention policy as planning applies it (`policies.retention`, mappings/policies.ts). */
export interface RetentionPolicy {
  readonly retentionDays: number
  readonly oldMessages: 'skip' | 'send'
}

/** The defaults of `policies.retention` (mappings/policies.ts), for a loader given no policy. */
export const DEFAULT_RETENTION_POLICY: RetentionPolicy = { retentionDays: 183, oldMessages: 'skip' }

/**
 * Which messages the packer settles instead of sending, at the loader's clock `nowMs`: those with
 * a `sentAt` (epoch seconds) before `now − retentionDays + margin`; none when old messages are sent.
 */
export function ageOutRule(policy: RetentionPolicy, nowMs: number, marginMs: number): AgeOutRule | undefined {
  if (policy.oldMessages === 'send') {
    return undefined
  }
  return {
    sentBefore: (nowMs - policy.retentionDays * DAY_MS + marginMs) / 1000,
    // Worded as planning stores a policy skip (`policy:<name>: <reason>`, src/plan/lookups.ts), so
    // reports count it under the retention policy.
    reason: `policy:retention: older than ${policy.retentionDays} days (retention.oldMessages: skip); aged out after planning, skipped when packed`,
  }
}
