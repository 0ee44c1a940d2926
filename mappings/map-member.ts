/**
 * Legacy membership → `MemberImport`. Policies: scopes, bans, joinedAt, dependencies.
 *
 * The platform refuses a joinedAt that is not after the group's createdAt and before now
 * (`ERR_IMPORT_INVALID_JOINEDAT`); the `joinedAt` policy decides what to do with one outside.
 */
import type { LegacyMember } from '../src/model/index.ts'
import { memberKey } from '../src/target/schemas.ts'
import { cleanRecord } from './clean-record.ts'
import { compact, finish, guard, optionalSeconds, Outcomes, Rejection, Skip } from './common.ts'
import { isSkippedRef, type MappingContext, type MapResult } from './types.ts'

const SCOPES = new Set(['admin', 'moderator', 'participant'])

export function mapMember(record: LegacyMember, ctx: MappingContext): MapResult<'members'> {
  const out = new Outcomes()
  return guard(out, () => {
    record = cleanRecord('members', record, ctx, out)
    const p = ctx.policies
    const group = ctx.group(record.groupId)
    if (group === undefined) {
      throw new Rejection('groupId', `unknown group ${JSON.stringify(record.groupId)}`)
    }
    if (isSkippedRef(group) && group.rejected !== undefined) {
      throw new Rejection('groupId', `its group ${JSON.stringify(record.groupId)} was rejected (${group.rejected})`)
    }
    if (isSkippedRef(group)) {
      throw new Skip('dependencies', `group-skipped-by-${group.policy}`, `its group was skipped (${group.policy})`)
    }
    const user = ctx.user(record.userId)
    if (user === undefined) {
      throw new Rejection('userId', `unknown user ${JSON.stringify(record.userId)}`)
    }
    if (isSkippedRef(user) && user.rejected !== undefined) {
      throw new Rejection('userId', `its user ${JSON.stringify(record.userId)} was rejected (${user.rejected})`)
    }
    if (isSkippedRef(user)) {
      throw new Skip('dependencies', `user-skipped-by-${user.policy}`, `its user was skipped (${user.policy})`)
    }

    if (record.banned && p.bans === 'skip') {
      throw new Skip('bans', 'skipped', 'banned member (bans: skip)')
    }
    if (record.banned) {
      out.add('bans', 'kept')
    }

    if (!SCOPES.has(record.scope)) {
      throw new Rejection('scope', `unknown scope ${JSON.stringify(record.scope)}`)
    }
    let scope = p.scopes[record.scope]
    if (group.owner !== undefined && group.owner === user.uid) {
      scope = p.scopes.owner
      out.add('scopes', `owner-to-${scope}`)
    } else if (scope !== record.scope) {
      out.add('scopes', `${record.scope}-to-${scope}`)
    }

    const nowS = Math.floor(ctx.now / 1000)
    let joinedAt = optionalSeconds(record.joinedAt, 'joinedAt', ctx, out)
    if (joinedAt !== undefined) {
      // Exclusive window: createdAt < joinedAt < now.
      const low = group.createdAt !== undefined ? group.createdAt + 1 : 0
      const high = nowS - 1
      if (joinedAt < low || joinedAt > high) {
        if (p.joinedAt === 'reject') {
          throw new Rejection('joinedAt', `joinedAt ${joinedAt} is outside (group createdAt ${group.createdAt ?? '-'}, now ${nowS})`, 'joinedAt')
        }
        if (p.joinedAt === 'omit' || low > high) {
          joinedAt = undefined
          out.add('joinedAt', 'omitted')
        } else {
          joinedAt = joinedAt < low ? low : high
          out.add('joinedAt', 'clamped')
        }
      }
    }

    const payload = compact({
      memberId: memberKey(group.guid, user.uid),
      guid: group.guid,
      uid: user.uid,
      scope,
      isBanned: record.banned ? true : undefined,
      joinedAt,
    })
    return { kind: 'items', items: [finish('members', payload, record, ctx, out)], extraItems: [], outcomes: out.list }
  })
}
