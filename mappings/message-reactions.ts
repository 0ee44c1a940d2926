/**
 * The `reactions` policy of `mapMessage`: the import has no reactions, so they go into chatferry's
 * metadata as `{"👍": [uid, …]}` (reactors that are unknown or skipped are left out) or are dropped.
 */
import type { MessageScope } from './message-scope.ts'
import { isSkippedRef } from './types.ts'

export function applyReactions({ record, ctx, out, own, deleted }: MessageScope): void {
  if (deleted || (record.reactions?.length ?? 0) === 0) {
    return
  }
  if (ctx.policies.reactions === 'drop') {
    out.add('reactions', 'dropped')
    return
  }
  const byEmoji: Record<string, string[]> = {}
  let unknown = false
  for (const r of record.reactions ?? []) {
    const u = r.userId ? ctx.user(r.userId) : undefined
    if (u === undefined || isSkippedRef(u) || typeof r.emoji !== 'string' || r.emoji === '') {
      unknown = true
      continue
    }
    const list = (byEmoji[r.emoji] ??= [])
    if (!list.includes(u.uid)) {
      list.push(u.uid)
    }
  }
  if (Object.keys(byEmoji).length > 0) {
    own.reactions = byEmoji
    out.add('reactions', 'in-metadata')
  }
  if (unknown) {
    out.add('reactions', 'reactor-unknown')
  }
}
