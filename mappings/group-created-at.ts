/**
 * A group's creation time when the source has none. Not configurable; counted under the `joinedAt`
 * policy (which it serves) as `joinedAt: createdAt-<rule>`.
 *
 * The platform gives a group imported without `createdAt` the time of its import, and then refuses
 * every member whose `joinedAt` is not after it (`ERR_IMPORT_INVALID_JOINEDAT`): a source without
 * group creation times would lose every membership's time. So chatferry gives such a group a time
 * no later than anything the source says happened in it, chosen in this order:
 *
 * 1. `kept-from-ledger`: the `createdAt` an earlier run already planned for the group (it may be on
 *    the platform already; a later run never moves it);
 * 2. `before-first-join` / `before-first-message`: one second before the earliest member `joinedAt`
 *    or group message `sentAt` of the group, whichever is earlier (the outcome names which);
 * 3. `before-source-earliest`: a group with neither: one second before the earliest member join or
 *    group message of the whole source;
 * 4. `before-run`: a source with no such time at all: two seconds before the run's clock (so a
 *    `joinedAt` clamped to now − 1 s still fits), counted like the others, never silently.
 *
 * Never later than two seconds before the run's clock, never before 1970.
 */
import type { GroupCreationHints } from './types.ts'

export const GROUP_CREATED_AT_RULES = [
  'kept-from-ledger',
  'before-first-join',
  'before-first-message',
  'before-source-earliest',
  'before-run',
] as const
/** The outcome a derived group creation time is counted as: `joinedAt: createdAt-<rule>`. */
export const GROUP_CREATED_AT_OUTCOME_PREFIX = 'createdAt-'
export type GroupCreatedAtRule = (typeof GROUP_CREATED_AT_RULES)[number]

function validMs(ms: number | undefined): ms is number {
  return typeof ms === 'number' && Number.isFinite(ms) && ms >= 0
}

/** The creation time (UNIX seconds) of a group the source gives none, and the rule that chose it. */
export function deriveGroupCreatedAt(hints: GroupCreationHints, now: number): { createdAt: number; rule: GroupCreatedAtRule } {
  const latest = Math.floor(now / 1000) - 2
  const { planned, firstJoinedAt, firstSentAt, sourceEarliest } = hints
  if (typeof planned === 'number' && Number.isInteger(planned) && planned >= 0) {
    return { createdAt: planned, rule: 'kept-from-ledger' }
  }
  const before = (ms: number): number => Math.max(0, Math.min(Math.floor(ms / 1000) - 1, latest))
  const join = validMs(firstJoinedAt) ? firstJoinedAt : undefined
  const sent = validMs(firstSentAt) ? firstSentAt : undefined
  if (join !== undefined && (sent === undefined || join <= sent)) {
    return { createdAt: before(join), rule: 'before-first-join' }
  }
  if (sent !== undefined) {
    return { createdAt: before(sent), rule: 'before-first-message' }
  }
  if (validMs(sourceEarliest)) {
    return { createdAt: before(sourceEarliest), rule: 'before-source-earliest' }
  }
  return { createdAt: Math.max(0, latest), rule: 'before-run' }
}
