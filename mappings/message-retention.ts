/**
 * The `retention` policy of `mapMessage`: a message older than `retentionDays` is skipped, or
 * sent when the app has extended retention (`oldMessages: send`).
 */
import { Skip } from './common.ts'
import type { MessageScope } from './message-scope.ts'

const DAY_MS = 86_400_000

export function applyRetention({ record, ctx, out }: MessageScope): void {
  const p = ctx.policies.retention
  if (record.sentAt < ctx.now - p.retentionDays * DAY_MS) {
    if (p.oldMessages === 'skip') {
      throw new Skip('retention', 'skipped', `older than ${p.retentionDays} days (retention.oldMessages: skip)`)
    }
    out.add('retention', 'sent-extended')
  }
}
