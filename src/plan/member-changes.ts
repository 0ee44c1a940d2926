/**
 * Changes of a loaded membership (`MemberImport` payloads): scope changes, bans, unbans, and
 * re-adds of a membership whose removal an earlier delta planned. Policy: `changes.members`. See
 * `change-intents.ts`.
 */
import { cannot, isSkipped, skipPolicy, unchangeable } from './change-fields.ts'
import type { ChangeIntent, ChangePolicies, NowSkipped, Payload } from './change-types.ts'

const FIXED: Readonly<Record<string, string>> = {
  joinedAt: 'the platform keeps the join time given at import',
}

const scopeOf = (p: Payload): string => (typeof p.scope === 'string' ? p.scope : 'participant')

export function memberChanges(before: Payload | null, after: Payload | NowSkipped, p: ChangePolicies): ChangeIntent[] {
  const policy = p.changes.members
  if (isSkipped(after)) {
    if (before === null) {
      return []
    }
    if (skipPolicy(after.skipped) === 'bans') {
      // Under `bans: skip` a banned member is no member on the platform.
      return [{ kind: 'member.kick', body: {}, policy, reason: 'banned in the source (bans: skip: removed from the group)' }]
    }
    return [cannot('member.unchangeable', `now skipped (${after.skipped}); the platform keeps the membership`, policy)]
  }
  const banned = after.isBanned === true
  if (before === null) {
    return banned
      ? [{ kind: 'member.ban', body: {}, policy, reason: 'back in the source, banned, after it was removed' }]
      : [{ kind: 'member.add', body: { scope: scopeOf(after) }, policy, reason: 'back in the source after it was removed' }]
  }
  const wasBanned = before.isBanned === true
  const out: ChangeIntent[] = []
  if (!wasBanned && banned) {
    out.push({ kind: 'member.ban', body: {}, policy, reason: 'banned in the source' })
  } else if (wasBanned && !banned) {
    // A ban removes the member on the platform: unbanned and a member again in the source.
    out.push({ kind: 'member.unban', body: {}, policy, reason: 'unbanned in the source' })
    out.push({ kind: 'member.add', body: { scope: scopeOf(after) }, policy, reason: 'unbanned in the source: a member again' })
  } else if (!banned && scopeOf(before) !== scopeOf(after)) {
    out.push({ kind: 'member.scope', body: { scope: scopeOf(after) }, policy, reason: `changed: scope ${scopeOf(before)} → ${scopeOf(after)}` })
  }
  return [...out, ...unchangeable('member.unchangeable', before, after, FIXED, policy)]
}
