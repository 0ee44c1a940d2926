/**
 * `rocketchat_subscription` documents of group rooms → `LegacyMember` (one per room and user: the
 * collection has a unique index on `{rid, u._id}`). Room roles: `owner` → admin, `moderator` →
 * moderator, anyone else (`leader` too) participant; never banned. `ts` (when the subscription was
 * made) is the join time.
 */
import type { LegacyMember } from '../../../src/model/records.ts'
import type { RoomKind } from './room-kind.ts'
import { type Doc, FieldProblem, optionalTime, requiredId, stringList, userRef } from './values.ts'

/** The legacy id of a subscription for reports: `<rid>/<u._id>`, `?` for what cannot be read. */
export function memberIdOf(sub: Doc): string {
  const rid = typeof sub.rid === 'string' ? sub.rid : '?'
  const u = sub.u as Doc | undefined
  const uid = u !== null && typeof u === 'object' && typeof u._id === 'string' ? u._id : '?'
  return `${rid}/${uid}`
}

export function decodeMember(sub: Doc, room: RoomKind | undefined): LegacyMember {
  const groupId = requiredId('rid', sub.rid)
  if (room === undefined) {
    throw new FieldProblem('rid', `room ${groupId} is not in rocketchat_room.bson`)
  }
  if (room.kind === 'unknown') {
    throw new FieldProblem('rid', `room ${groupId} cannot be read (${room.field}: ${room.reason})`)
  }
  const user = userRef('u', sub.u, true) as { id: string }
  const roles = stringList('roles', sub.roles)
  const updatedAt = optionalTime('_updatedAt', sub._updatedAt)
  const joinedAt = optionalTime('ts', sub.ts)
  const member: { -readonly [K in keyof LegacyMember]: LegacyMember[K] } = {
    groupId,
    userId: user.id,
    scope: roles.includes('owner') ? 'admin' : roles.includes('moderator') ? 'moderator' : 'participant',
    banned: false,
  }
  if (joinedAt !== undefined) {
    member.joinedAt = joinedAt
  }
  if (updatedAt !== undefined) {
    member.updatedAt = updatedAt
  }
  return member
}
