/**
 * The `threads` policy of `mapMessage`: the import has no thread field, so a reply is skipped
 * or flattened into an ordinary message with `parent: {id, muid}` in chatferry's metadata,
 * optionally prefixed with a quote of its parent (`threads.quoteParent`).
 */
import { Skip } from './common.ts'
import { messageMuid } from './ids.ts'
import type { MessageScope } from './message-scope.ts'
import { DEFAULT_QUOTE_WORDS } from './policies.ts'
import { quoteOf } from './text.ts'
import { isSkippedRef } from './types.ts'

export function skipReply({ reply, ctx }: MessageScope): void {
  if (reply && ctx.policies.threads.replies === 'skip') {
    throw new Skip('threads', 'skipped', 'thread reply (threads.replies: skip)')
  }
}

/** A flattened reply's text: `text`, quoted when `threads.quoteParent` asks and the parent is known. */
export function flattenReply({ reply, record, ctx, out, own, deleted }: MessageScope, text: string): string {
  if (!reply) {
    return text
  }
  const parentId = record.threadParentId as string
  const parent = ctx.message(parentId)
  const known = parent !== undefined && !isSkippedRef(parent)
  own.parent = { id: parentId, muid: known ? parent.muid : messageMuid(parentId) }
  out.add('threads', 'flattened')
  if (!known) {
    out.add('threads', 'parent-unknown')
  }
  const quoteParent = ctx.policies.threads.quoteParent
  const words = quoteParent === true ? DEFAULT_QUOTE_WORDS : quoteParent
  if (words !== false && known && parent.text !== undefined && parent.text.trim() !== '' && !deleted) {
    const quoted = quoteOf(parent.text, words, parent.senderName) + text
    out.add('threads', 'quoted')
    return quoted
  }
  return text
}
