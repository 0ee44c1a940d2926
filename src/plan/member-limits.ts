/**
 * The platform's member limits, which no single item can break on its own: a user is in at most
 * `groupsPerUser` groups (documented 2,000) and a group holds at most `membersPerGroup` members
 * (documented 100,000). Planning counts the memberships it plans per user and per group — starting
 * from what the ledger already planned, sent or loaded — and rejects each membership beyond either
 * limit, so the loader never sends one the platform would refuse. Which ones are rejected is
 * deterministic: memberships are admitted in the order the source is read (its key order), so the
 * ones beyond the limit in that order are the ones rejected, on every plan and every resumed run.
 */

export interface MemberLimitsConfig {
  readonly groupsPerUser: number
  readonly membersPerGroup: number
}

/** Memberships already planned per group (`guid`) and per user (`uid`). */
export interface MembershipCounts {
  readonly byGroup: Map<string, number>
  readonly byUser: Map<string, number>
}

export const MEMBER_LIMIT_CODE = 'MEMBER_LIMIT'

export class MemberLimits {
  readonly limits: MemberLimitsConfig
  private readonly byGroup: Map<string, number>
  private readonly byUser: Map<string, number>
  /** Legacy member ids of the page in hand that the starting counts include already (a delta re-reads them). */
  counted: ReadonlySet<string> = new Set()

  constructor(limits: MemberLimitsConfig, counts?: MembershipCounts) {
    this.limits = limits
    this.byGroup = new Map(counts?.byGroup)
    this.byUser = new Map(counts?.byUser)
  }

  /**
   * Admits the membership of `uid` in `guid` (counted), or returns why it is refused (not counted):
   * `{field, reason}` naming the user or group and the limit. A membership the starting counts
   * include ({@link counted}) is admitted without counting it again.
   */
  admit(guid: string, uid: string, legacyId: string): { field: 'guid' | 'uid'; reason: string } | undefined {
    if (this.counted.size > 0 && this.counted.has(legacyId)) {
      return undefined
    }
    const inGroup = this.byGroup.get(guid) ?? 0
    if (inGroup >= this.limits.membersPerGroup) {
      return {
        field: 'guid',
        reason: `group ${guid} already has ${inGroup.toLocaleString('en-US')} members planned; the platform allows at most ${this.limits.membersPerGroup.toLocaleString('en-US')} (target.limits.membersPerGroup), so ${uid} is not added`,
      }
    }
    const ofUser = this.byUser.get(uid) ?? 0
    if (ofUser >= this.limits.groupsPerUser) {
      return {
        field: 'uid',
        reason: `user ${uid} is already planned in ${ofUser.toLocaleString('en-US')} groups; the platform allows at most ${this.limits.groupsPerUser.toLocaleString('en-US')} (target.limits.groupsPerUser), so ${guid} is not added`,
      }
    }
    this.byGroup.set(guid, inGroup + 1)
    this.byUser.set(uid, ofUser + 1)
    return undefined
  }
}
