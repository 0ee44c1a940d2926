/**
 * The `edits` policy of `mapMessage`: the platform keeps no edit history, so an edited message is
 * sent with its latest text, and `editedAt` goes into chatferry's metadata or is dropped.
 */
import { optionalSeconds } from './common.ts'
import type { MessageScope } from './message-scope.ts'

export function applyEdits({ record, ctx, out, own, deleted }: MessageScope): void {
  if (record.editedAt === undefined || record.editedAt === null || deleted) {
    return
  }
  if (ctx.policies.edits.editedAt === 'metadata') {
    const at = optionalSeconds(record.editedAt, 'editedAt', ctx, out)
    if (at !== undefined) {
      own.editedAt = at
    }
    out.add('edits', 'editedAt-in-metadata')
  } else {
    out.add('edits', 'editedAt-dropped')
  }
}
