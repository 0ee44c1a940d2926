/**
 * The `mentions` policy of `mapMessage`: `rewrite` turns mentions of known users into
 * `<@uid:UID>` and lists them in `mentionedUserDetails` (per part of a split message); `keep`
 * leaves the text alone. Recognised: `<@uid:LEGACY_ID>`, `@handle` for each of the record's
 * `mentionHandles`, and `@username` of planned users that carry their legacy username.
 */
import type { UserDetails } from '../src/target/schemas.ts'
import { compact } from './common.ts'
import type { MessageScope } from './message-scope.ts'
import { mentionedUids, rewriteMentions } from './text.ts'
import { isSkippedRef, type PlannedUser } from './types.ts'

export interface RewrittenMentions {
  readonly text: string
  /** The mentioned users' details by uid; `undefined` when no mention was resolved. */
  readonly details: Map<string, UserDetails> | undefined
}

export function rewriteMessageMentions({ record, ctx, out, deleted }: MessageScope, text: string): RewrittenMentions {
  const handles = record.mentionHandles ? Object.entries(record.mentionHandles) : []
  if (deleted || ((record.mentions?.length ?? 0) === 0 && handles.length === 0)) {
    return { text, details: undefined }
  }
  if (ctx.policies.mentions !== 'rewrite') {
    out.add('mentions', 'kept')
    return { text, details: undefined }
  }
  let details: Map<string, UserDetails> | undefined
  const byLegacyId = new Map<string, string>()
  const byHandle = new Map<string, string>()
  let unresolved = false
  for (const legacyId of new Set([...(record.mentions ?? []), ...handles.map(([, id]) => id)])) {
    const u = ctx.user(legacyId)
    if (u === undefined || isSkippedRef(u)) {
      unresolved = true
      continue
    }
    byLegacyId.set(legacyId, u.uid)
    if (u.username !== undefined) {
      byHandle.set(u.username, u.uid)
    }
    ;(details ??= new Map()).set(u.uid, userDetails(u))
  }
  for (const [handle, legacyId] of handles) {
    const uid = byLegacyId.get(legacyId)
    if (uid !== undefined) {
      byHandle.set(handle, uid)
    }
  }
  const rewritten = rewriteMentions(text, byLegacyId, byHandle)
  if (rewritten !== text) {
    out.add('mentions', 'rewritten')
  }
  if (unresolved) {
    out.add('mentions', 'unresolved')
  }
  return { text: rewritten, details }
}

/** `mentionedUserDetails` of one part: the users its text mentions; `undefined` when none. */
export function mentionedUserDetails(details: Map<string, UserDetails>, text: string): Record<string, UserDetails> | undefined {
  let mentioned: Record<string, UserDetails> | undefined
  for (const uid of mentionedUids(text)) {
    const d = details.get(uid)
    if (d !== undefined) {
      ;(mentioned ??= {})[uid] = d
    }
  }
  return mentioned
}

function userDetails(u: PlannedUser): UserDetails {
  return compact({ uid: u.uid, name: u.name, avatar: u.avatar })
}
