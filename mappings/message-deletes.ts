/**
 * The `deletes` policy of `mapMessage`: a message deleted in the source is skipped, or sent as
 * a tombstone (the configured text, `deletedAt` in chatferry's metadata). A tombstone keeps no
 * attachments, reactions or mentions (their sections leave a deleted message alone).
 */
import { optionalSeconds, Skip } from './common.ts'
import type { MessageContent, MessageScope } from './message-scope.ts'

export function skipDeleted({ deleted, ctx }: MessageScope): void {
  if (deleted && ctx.policies.deletes.mode === 'skip') {
    throw new Skip('deletes', 'skipped', 'deleted message (deletes.mode: skip)')
  }
}

/** The content of a deleted message under `deletes.mode: tombstone`. */
export function tombstone({ record, ctx, out, own }: MessageScope): MessageContent {
  const text = ctx.policies.deletes.tombstoneText
  const at = optionalSeconds(record.deletedAt, 'deletedAt', ctx, out)
  own.deletedAt = at ?? true
  out.add('deletes', 'tombstoned')
  return { text, attachments: [], customData: undefined, type: 'text', category: 'message' }
}
