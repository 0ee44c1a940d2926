/**
 * A member update refused with `ERR_UID_NOT_FOUND` because its user is deactivated on the platform
 * (it answers member calls on a deactivated user that way, as for an unknown one — see
 * src/sandbox/README.md): one read tells the two apart. A deactivated user's membership cannot be
 * changed, and that is not a fault of the run, so the update is settled `reported` with code
 * `USER_DEACTIVATED` and its reason, not rejected (a rejection would fail every later delta with
 * exit 3 and `retry-rejected` could not fix it). The membership stays on the platform as it was; a
 * deactivated user cannot use it. `status` counts these updates as reported.
 */
import type { ClaimedUpdate } from '../state/update-lane-ledger.ts'
import { memberOf, type ResolvedUpdate } from './apply-update.ts'
import type { UpdateLaneRun } from './update-lane-run.ts'

interface Refusal {
  readonly code: string
  readonly message: string
  readonly httpStatus: number | null
}

/** True when the update was settled as reported (its user is deactivated on the platform). */
export async function settleIfDeactivatedMember(lane: UpdateLaneRun, u: ClaimedUpdate, r: ResolvedUpdate, refusal: Refusal): Promise<boolean> {
  if (!(await memberOfDeactivatedUser(lane, r, refusal.code))) {
    return false
  }
  const error = {
    httpStatus: refusal.httpStatus,
    code: 'USER_DEACTIVATED',
    message:
      `${r.kind} of ${r.targetKey}: the user is deactivated on the platform, which refuses membership changes of a deactivated user ` +
      `(${refusal.code}); the membership stays as it was, unusable while the user is deactivated`,
  }
  if (await lane.ledger.report(u.id, lane.owner, error)) {
    lane.count('reported', u.kind)
    lane.log.warn(
      { update: u.id, kind: u.kind, key: u.targetKey, legacyId: u.legacyId, code: error.code },
      `update reported, not applied: ${error.message}`,
    )
  } else {
    lane.counters.fenced++
  }
  return true
}

async function memberOfDeactivatedUser(lane: UpdateLaneRun, r: ResolvedUpdate, code: string): Promise<boolean> {
  if (!r.kind.startsWith('member.') || code !== 'ERR_UID_NOT_FOUND') {
    return false
  }
  try {
    const { uid } = memberOf(r)
    const answer = await lane.chatCall(() => lane.options.client.findUser(uid))
    return typeof answer?.value?.deactivatedAt === 'number'
  } catch (err) {
    lane.log.debug({ err, key: r.targetKey }, "reading the member's user failed; the update is rejected as refused")
    return false
  }
}
