/**
 * A channel's members → LegacyMembers. Group channels: their `members` (the export's channel
 * record, or `GET /group_channels/{url}/members`), `role: operator` → admin; open channels have
 * no members, only `operators`, each an admin member. An operator not listed among the members is
 * a member too (admin). Muted members stay participants (the platform has no mute); a member the
 * channel names twice is one member and a problem for the second entry. Rows note `operators:
 * admin` (a listed member who is an operator), `operators: admin-added` (an operator not among the
 * members, every operator of an open channel) and `mutes: dropped` (`is_muted`).
 */
import type { SourceOutcome, SourceRow } from '../../../src/model/connector.ts'
import type { LegacyMember } from '../../../src/model/records.ts'
import { bool, defined, isObject, time, userIdOf } from '../fields.ts'

const ADMIN: SourceOutcome = { policy: 'operators', outcome: 'admin' }
const ADDED: SourceOutcome = { policy: 'operators', outcome: 'admin-added' }
const MUTE_DROPPED: SourceOutcome = { policy: 'mutes', outcome: 'dropped' }

/** Members of one channel, in the order listed: `members` first, then `operators` not among them. */
export function channelMembers(groupId: string, members: readonly unknown[], operators: readonly unknown[]): SourceRow<LegacyMember>[] {
  const ops = new Set(operators.map(userIdOf).filter((u): u is string => u !== undefined))
  const seen = new Set<string>()
  const rows: SourceRow<LegacyMember>[] = []
  const entry = (m: unknown, index: number, admin: boolean) => {
    const userId = userIdOf(m)
    if (userId === undefined) {
      rows.push({
        ok: false,
        legacyId: `${groupId}/?`,
        field: 'user_id',
        reason: `member ${index} of channel ${groupId} has no user_id`,
        instance: `#${index}`,
      })
      return
    }
    if (seen.has(userId)) {
      rows.push({
        ok: false,
        legacyId: `${groupId}/${userId}`,
        field: 'user_id',
        reason: `channel ${groupId} lists member ${userId} twice`,
        instance: `#${index}`,
      })
      return
    }
    seen.add(userId)
    const role = isObject(m) ? m.role : undefined
    const operator = admin || role === 'operator' || ops.has(userId)
    const outcomes: SourceOutcome[] = []
    if (operator) {
      outcomes.push(admin ? ADDED : ADMIN)
    }
    if (isObject(m) && bool(m.is_muted)) {
      outcomes.push(MUTE_DROPPED)
    }
    const record = defined({
      groupId,
      userId,
      scope: operator ? ('admin' as const) : ('participant' as const),
      banned: false,
      joinedAt: isObject(m) ? safeTime(m.joined_ts) : undefined,
    })
    rows.push(outcomes.length > 0 ? { ok: true, record, outcomes } : { ok: true, record })
  }
  members.forEach((m, i) => entry(m, i, false))
  operators.forEach((o, i) => {
    const userId = userIdOf(o)
    if (userId === undefined || !seen.has(userId)) {
      entry(o, members.length + i, true)
    }
  })
  return rows
}

function safeTime(v: unknown): number | undefined {
  try {
    return time('joined_ts', v)
  } catch {
    return undefined
  }
}
